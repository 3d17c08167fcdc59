"""The pack's CI identity rules (policies/dra_guardrails/identity_rules.py): over-broad roles and trust are mandatory findings.

Each case starts from what the real bootstrap registers (tools/ci_identity under the mock engine) and
changes one thing, the way a careless edit or a hand-made resource would, through the same entry point
`pulumi preview --policy-pack` calls (`check_resources`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from policies.dra_guardrails import RULES, PlannedResource, check_resources
from policies.dra_guardrails.identity_rules import (
    ACCESS_PERMIT_TYPE,
    ENVIRONMENT_LABEL,
    FEDERATED_CREDENTIALS_TYPE,
    IDENTITY_LABEL,
    SERVICE_ACCOUNT_TYPE,
    repository_of,
    subject_problem,
)
from tests.helpers import ROOT
from tools.plan.mock_engine import run_program

BOOTSTRAP = ROOT / "tools" / "ci_identity"


@pytest.fixture(scope="module")
def resources() -> list[PlannedResource]:
    run = run_program("dev", project_dir=BOOTSTRAP, project="nebius-dra-ci-identity")
    assert run.error is None, run.error
    return [PlannedResource(r.urn, r.type, r.name, r.inputs) for r in run.resources]


def changed(resources: list[PlannedResource], type_token: str, kind: str, change: Callable[[dict], Any]):
    """The resources with the `kind` identity's `type_token` resource changed in place (a copy)."""
    result = []
    for resource in resources:
        props = {key: dict(value) if isinstance(value, dict) else value for key, value in resource.props.items()}
        if resource.type == type_token and props["labels"][IDENTITY_LABEL] == kind:
            change(props)
        result.append(PlannedResource(resource.urn, resource.type, resource.name, props))
    return result


def findings_of(resources: list[PlannedResource]) -> list[tuple[str, bool, str]]:
    return [(f.policy, f.mandatory, f.message) for f in check_resources(resources)]


def test_the_rules_are_registered_as_mandatory_stack_rules():
    rules = {rule.name: rule for rule in RULES}
    for name in ("ci-identity-trust", "ci-identity-roles"):
        assert rules[name].level.value == "mandatory"


def test_the_bootstrap_passes(resources):
    assert findings_of(resources) == []


def trust(kind: str, subject: str | None = None, **fields: Any) -> Callable[[dict], None]:
    def change(props: dict) -> None:
        if subject is not None:
            props["federatedSubjectId"] = subject
        props.update(fields)

    return change


TRUST_CASES = {
    "wildcard-environment": ("deploy", "repo:example-org/nebius-dra:environment:*", "wildcard"),
    "wildcard-repository": ("deploy", "repo:example-org/*:environment:dev", "wildcard"),
    "question-mark": ("deploy", "repo:example-org/nebius-dr?:environment:dev", "wildcard"),
    "branch-for-deploy": ("deploy", "repo:example-org/nebius-dra:ref:refs/heads/main", "a branch or tag"),
    "tag-for-deploy": ("deploy", "repo:example-org/nebius-dra:ref:refs/tags/v1", "a branch or tag"),
    "pull-request-for-deploy": ("deploy", "repo:example-org/nebius-dra:pull_request", "every pull request"),
    "no-context": ("deploy", "repo:example-org/nebius-dra", "no environment"),
    "other-environment": ("deploy", "repo:example-org/nebius-dra:environment:prod", "'prod'"),
    "owner-only": ("deploy", "repository_owner:example-org", "names no repository"),
    "no-repository": ("deploy", "environment:dev", "names no repository"),
    "owner-without-repository": ("deploy", "repo:example-org:environment:dev", "names no repository"),
    "half-immutable": ("deploy", "repo:example-org@1/nebius-dra:environment:dev", "names no repository"),
    "empty": ("deploy", "", "is empty"),
    "preview-environment": ("preview", "repo:example-org/nebius-dra:environment:dev", "pull_request runs only"),
    "preview-branch": ("preview", "repo:example-org/nebius-dra:ref:refs/heads/main", "pull_request runs only"),
}


@pytest.mark.parametrize(("kind", "subject", "said"), TRUST_CASES.values(), ids=TRUST_CASES.keys())
def test_trust_wider_than_one_repository_and_context_is_mandatory(resources, kind, subject, said):
    found = findings_of(changed(resources, FEDERATED_CREDENTIALS_TYPE, kind, trust(kind, subject)))
    assert [(policy, mandatory) for policy, mandatory, _ in found] == [("ci-identity-trust", True)], found
    assert said in found[0][2]


def test_another_issuer_is_mandatory(resources):
    other = trust("deploy", oidcProvider={"issuerUrl": "https://gitlab.com"})
    found = findings_of(changed(resources, FEDERATED_CREDENTIALS_TYPE, "deploy", other))
    assert [(p, m) for p, m, _ in found] == [("ci-identity-trust", True)] and "gitlab.com" in found[0][2]


def test_two_repositories_are_mandatory(resources):
    other = trust("preview", "repo:someone-else/nebius-dra:pull_request")
    found = findings_of(changed(resources, FEDERATED_CREDENTIALS_TYPE, "preview", other))
    assert [(p, m) for p, m, _ in found] == [("ci-identity-trust", True)]
    assert "more than one repository" in found[0][2] and "someone-else/nebius-dra" in found[0][2]


def test_an_unlabeled_identity_cannot_be_judged_and_is_refused(resources):
    def unlabel(props: dict) -> None:
        props["labels"] = {}

    for type_token, policy in (
        (FEDERATED_CREDENTIALS_TYPE, "ci-identity-trust"),
        (ACCESS_PERMIT_TYPE, "ci-identity-roles"),
    ):
        found = findings_of(changed(resources, type_token, "deploy", unlabel))
        assert [(p, m) for p, m, _ in found] == [(policy, True)], found


def test_credentials_or_a_permit_that_do_not_name_their_environment_are_refused(resources):
    """Without the environment label a subject of any environment, dev's deploy account trusting prod, was taken."""

    def to_prod(props: dict) -> None:
        props["labels"] = {IDENTITY_LABEL: "deploy"}
        props["federatedSubjectId"] = "repo:example-org/nebius-dra:environment:prod"

    found = findings_of(changed(resources, FEDERATED_CREDENTIALS_TYPE, "deploy", to_prod))
    assert [(p, m) for p, m, _ in found] == [("ci-identity-trust", True)], found
    assert f"label {ENVIRONMENT_LABEL} is None, not an environment name" in found[0][2]

    def unnamed(props: dict) -> None:
        props["labels"] = {IDENTITY_LABEL: "deploy", ENVIRONMENT_LABEL: "prod*"}

    found = findings_of(changed(resources, ACCESS_PERMIT_TYPE, "deploy", unnamed))
    assert [(p, m) for p, m, _ in found] == [("ci-identity-roles", True)], found
    assert f"label {ENVIRONMENT_LABEL} is 'prod*'" in found[0][2]


@pytest.mark.parametrize(
    ("type_token", "field", "policy"),
    [
        (ACCESS_PERMIT_TYPE, "resourceId", "ci-identity-roles"),
        (FEDERATED_CREDENTIALS_TYPE, "parentId", "ci-identity-trust"),
    ],
)
def test_a_permit_or_trust_on_another_project_than_the_environments_is_refused(resources, type_token, field, policy):
    """Of `project-` shape is not enough: the project is the one the identity's account lives in, dev's."""
    other = changed(resources, type_token, "deploy", lambda props: props.update({field: "project-e00prod000000000000"}))
    found = findings_of(other)
    assert [(p, m) for p, m, _ in found] == [(policy, True)], found
    assert f"{field} 'project-e00prod000000000000' is not the project of 'dev''s deploy identity" in found[0][2]
    assert "'project-e00dev0000000000000', where its service account lives" in found[0][2]


def test_an_identity_without_its_service_account_has_no_project_to_act_on(resources):
    found = findings_of([r for r in resources if r.type != SERVICE_ACCOUNT_TYPE])
    assert {p for p, _, _ in found} == {"ci-identity-roles", "ci-identity-trust"}
    assert all("has no service account beside it" in message for _, _, message in found)


ROLE_CASES = {
    "deploy-admin": ("deploy", {"role": "admin"}, "role 'admin'"),
    "deploy-storage": ("deploy", {"role": "storage.editor"}, "role 'storage.editor'"),
    "preview-editor": ("preview", {"role": "editor"}, "role 'editor'"),
    "tenant-wide": ("deploy", {"resourceId": "tenant-e00example0000000"}, "not a project"),
}


@pytest.mark.parametrize(("kind", "fields", "said"), ROLE_CASES.values(), ids=ROLE_CASES.keys())
def test_more_than_the_named_roles_is_mandatory(resources, kind, fields, said):
    found = findings_of(changed(resources, ACCESS_PERMIT_TYPE, kind, lambda props: props.update(fields)))
    assert [(p, m) for p, m, _ in found] == [("ci-identity-roles", True)], found
    assert said in found[0][2]


def test_a_second_permit_with_a_wider_role_is_mandatory(resources):
    deploy_permit = next(r for r in resources if r.type == ACCESS_PERMIT_TYPE and r.props["role"] == "editor")
    extra = PlannedResource(
        deploy_permit.urn + "-admin",
        deploy_permit.type,
        "ci-dev-deploy-admin",
        {**deploy_permit.props, "role": "admin"},
    )
    found = findings_of([*resources, extra])
    assert [(p, m) for p, m, _ in found] == [("ci-identity-roles", True)]


def test_a_service_account_key_is_mandatory(resources):
    key = PlannedResource("urn:key", "nebius:index/iamV1AuthPublicKey:IamV1AuthPublicKey", "ci-key", {"parentId": "x"})
    found = findings_of([*resources, key])
    assert [(p, m) for p, m, _ in found] == [("ci-identity-roles", True)] and "long-lived" in found[0][2]


def test_the_main_stacks_have_nothing_for_the_identity_rules(stack_runs):
    """The rules are inert where no IAM resource is planned: the same pack gates both projects."""
    for run in stack_runs.values():
        planned = [PlannedResource(r.urn, r.type, r.name, r.inputs) for r in run.resources]
        assert not [f for f in check_resources(planned) if f.policy.startswith("ci-identity")]


@pytest.mark.parametrize(
    ("subject", "repository"),
    [
        ("repo:octo-org/octo-repo:environment:Production", "octo-org/octo-repo"),
        ("repo:octo-org/octo-repo:pull_request", "octo-org/octo-repo"),
        ("repo:contoso@5544123/payments-api@821093847:environment:prod", "contoso@5544123/payments-api@821093847"),
        ("repository_owner:octo-org", None),
    ],
)
def test_the_grammar_reads_githubs_documented_subjects(subject, repository):
    """Examples from docs.github.com/en/actions/reference/security/oidc and the immutable form's guides."""
    assert repository_of(subject) == repository


def test_githubs_documented_environment_and_pull_request_subjects_are_accepted():
    assert subject_problem("repo:octo-org/octo-repo:environment:Production", "deploy", "Production") is None
    assert subject_problem("repo:octo-org/octo-repo:pull_request", "preview", None) is None
    assert subject_problem("repo:contoso@5544123/payments-api@821093847:environment:prod", "deploy", "prod") is None
