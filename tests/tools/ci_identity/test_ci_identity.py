"""The CI identity bootstrap (tools/ci_identity) under the SDK's mock engine, against what others documented.

Its inputs are walked against the installed pulumi-nebius SDK's documented fields (the provider-truth
walk of tests/components/test_provider_truth.py), its subjects against GitHub's documented formats, and the whole
registration against the policy pack the bootstrap's previews run with. Its config errors name the key.
"""

from __future__ import annotations

import pytest

from components.config.errors import ConfigError
from components.config.stack_file import read_stack_file
from policies.dra_guardrails import RULES, Finding, PlannedResource, check_resources
from policies.dra_guardrails.identity_rules import (
    ACCESS_PERMIT_TYPE,
    FEDERATED_CREDENTIALS_TYPE,
    GITHUB_ISSUER,
    GROUP_MEMBERSHIP_TYPE,
    GROUP_TYPE,
    SERVICE_ACCOUNT_TYPE,
)
from tests.helpers import ROOT, STACKS
from tests.nebius_inputs import required_of, resource_arg_classes, run_problems
from tools.ci_identity import check
from tools.ci_identity.config import NAMESPACE, CiIdentitySettings, declared_keys
from tools.ci_identity.subjects import GitHubRepository
from tools.plan.mock_engine import ProgramRun, run_program

BOOTSTRAP = ROOT / "tools" / "ci_identity"
PROJECT = "nebius-dra-ci-identity"


def bootstrap(stack: str, **settings: str) -> ProgramRun:
    """The bootstrap's stack file, or (with settings) exactly these keys, as the CLI would pass them."""
    if not settings:
        return run_program(stack, project_dir=BOOTSTRAP, project=PROJECT)
    return run_program(
        stack, {f"{NAMESPACE}:{key}": value for key, value in settings.items()}, project_dir=BOOTSTRAP, project=PROJECT
    )


@pytest.fixture(scope="module")
def runs() -> dict[str, ProgramRun]:
    found = {stack: bootstrap(stack) for stack in STACKS}
    for stack, run in found.items():
        assert run.error is None, f"{stack}: {run.error}"
    return found


def planned(run: ProgramRun) -> list[PlannedResource]:
    return [PlannedResource(r.urn, r.type, r.name, r.inputs) for r in run.resources]


def one(run: ProgramRun, type_token: str, kind: str):
    (found,) = [r for r in run.of_type(type_token) if r.inputs["labels"]["nebius-dra-ci-identity"] == kind]
    return found


@pytest.mark.parametrize("stack", STACKS)
def test_each_environment_gets_a_deploy_and_a_preview_identity_and_no_key(runs, stack):
    run = runs[stack]
    nebius = sorted(r.type for r in run.resources if r.type.startswith("nebius:"))
    assert nebius == sorted(
        2 * [SERVICE_ACCOUNT_TYPE, GROUP_TYPE, ACCESS_PERMIT_TYPE, GROUP_MEMBERSHIP_TYPE, FEDERATED_CREDENTIALS_TYPE]
    )
    assert set(run.outputs) == {"deployServiceAccountId", "deploySubject", "previewServiceAccountId", "previewSubject"}


@pytest.mark.parametrize("stack", STACKS)
def test_the_identities_work_in_the_project_the_main_stack_deploys_into(runs, stack):
    """The bootstrap's projectId is the main stack's nebius-dra:parentId: the roles land where the stack lives."""
    parent = read_stack_file(stack).values["nebius-dra:parentId"]
    for resource in runs[stack].resources:
        if resource.type in (SERVICE_ACCOUNT_TYPE, GROUP_TYPE, FEDERATED_CREDENTIALS_TYPE):
            assert resource.inputs["parentId"] == parent, resource.name
        if resource.type == ACCESS_PERMIT_TYPE:
            assert resource.inputs["resourceId"] == parent, resource.name


@pytest.mark.parametrize("stack", STACKS)
def test_the_graph_ties_account_group_permit_membership_and_trust_together(runs, stack):
    run = runs[stack]
    for kind, role in (("deploy", "editor"), ("preview", "viewer")):
        account, group = one(run, SERVICE_ACCOUNT_TYPE, kind), one(run, GROUP_TYPE, kind)
        permit, member = one(run, ACCESS_PERMIT_TYPE, kind), one(run, GROUP_MEMBERSHIP_TYPE, kind)
        trust = one(run, FEDERATED_CREDENTIALS_TYPE, kind)
        assert permit.inputs["role"] == role
        # The mock engine's IDs are `<name>-id`: each link is the resource the proto says it is.
        assert permit.inputs["parentId"] == member.inputs["parentId"] == f"{group.name}-id"
        assert member.inputs["memberId"] == trust.inputs["subjectId"] == f"{account.name}-id"
        assert trust.inputs["oidcProvider"] == {"issuerUrl": GITHUB_ISSUER}


@pytest.mark.parametrize("stack", STACKS)
def test_every_input_is_what_the_installed_sdk_documents(runs, stack):
    assert run_problems(runs[stack]) == []


def test_the_walk_knows_the_iam_resources_and_their_required_fields():
    """Guards the test above: the walk reads these classes, and a missing required field is a problem."""
    classes = resource_arg_classes()
    assert required_of(classes[FEDERATED_CREDENTIALS_TYPE]) == {"subjectId"}
    broken = bootstrap("dev")
    trust = next(r for r in broken.resources if r.type == FEDERATED_CREDENTIALS_TYPE)
    del trust.inputs["subjectId"]
    trust.inputs["oidcProvider"]["issuerUri"] = trust.inputs["oidcProvider"].pop("issuerUrl")
    problems = run_problems(broken)
    assert any("subjectId" in problem or "subject_id" in problem for problem in problems), problems
    assert any("issuerUri" in problem for problem in problems), problems


@pytest.mark.parametrize("stack", STACKS)
def test_the_policy_pack_passes_the_bootstrap_and_refuses_it_broken(runs, stack):
    assert check_resources(planned(runs[stack])) == []
    broken = planned(runs[stack])
    permit = next(r for r in broken if r.type == ACCESS_PERMIT_TYPE and r.props["role"] == "editor")
    broken[broken.index(permit)] = PlannedResource(
        permit.urn, permit.type, permit.name, {**permit.props, "role": "admin"}
    )
    findings = check_resources(broken)
    assert [(f.policy, f.mandatory) for f in findings] == [("ci-identity-roles", True)]


# GitHub's documented examples, verbatim: docs.github.com/en/actions/reference/security/oidc ("Filtering for a
# specific environment": repo:octo-org/octo-repo:environment:Production; "Filtering for pull_request events":
# repo:octo-org/octo-repo:pull_request) and the immutable form (GitHub changelog 2026-04-23; Microsoft Entra's
# migration guide: repo:contoso@5544123/payments-api@821093847:ref:refs/heads/main, its environment twin below).
def test_the_subjects_are_githubs_documented_formats():
    named = GitHubRepository("octo-org", "octo-repo")
    assert named.environment_subject("Production") == "repo:octo-org/octo-repo:environment:Production"
    assert named.pull_request_subject() == "repo:octo-org/octo-repo:pull_request"
    immutable = GitHubRepository("contoso", "payments-api", (5544123, 821093847))
    assert immutable.subject_prefix == "repo:contoso@5544123/payments-api@821093847"
    assert immutable.environment_subject("prod") == "repo:contoso@5544123/payments-api@821093847:environment:prod"
    assert immutable.pull_request_subject() == "repo:contoso@5544123/payments-api@821093847:pull_request"


def test_the_immutable_ids_reach_the_trust():
    run = bootstrap(
        "prod",
        repository="contoso/payments-api",
        repositoryOwnerId="5544123",
        repositoryId="821093847",
        projectId="project-e00prod000000000000",
    )
    assert run.error is None, run.error
    assert run.outputs["deploySubject"] == "repo:contoso@5544123/payments-api@821093847:environment:prod"
    assert check_resources(planned(run)) == []


def test_the_preview_identity_can_be_left_out():
    run = bootstrap("dev", repository="o/r", projectId="project-e00dev0000000000000", previewIdentity="false")
    assert run.error is None, run.error
    assert {r.inputs["labels"]["nebius-dra-ci-identity"] for r in run.resources if r.type.startswith("nebius:")} == {
        "deploy"
    }


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        (
            {"environment": "dev", "projectId": "project-e00prod000000000000"},
            'projectId: got "project-e00prod000000000000", but the dev stack (Pulumi.dev.yaml) deploys to '
            '"project-e00dev0000000000000"',
        ),
        (
            {"environment": "staging", "projectId": "project-e00dev0000000000000"},
            'projectId: got "project-e00dev0000000000000", which cannot be checked against the project the staging '
            "stack deploys to: no stack file Pulumi.staging.yaml",
        ),
    ],
    ids=["another-environments-project", "no-such-stack"],
)
def test_the_project_is_the_one_the_environments_stack_deploys_to(settings, said):
    run = bootstrap("dev", repository="o/r", **settings)
    assert isinstance(run.error, ConfigError) and run.resources == [], run.error
    assert f"{NAMESPACE}:{said}" in str(run.error)


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"projectId": "project-e00dev0000000000000"}, f"{NAMESPACE}:repository: is empty"),
        ({"repository": "octo-org/*", "projectId": "project-e00x"}, f"{NAMESPACE}:repository"),
        ({"repository": "octo-org", "projectId": "project-e00x"}, f"{NAMESPACE}:repository"),
        ({"repository": "o/r", "projectId": "tenant-e00x"}, f"{NAMESPACE}:projectId"),
        # No GitHub repository is named so, so no token's subject names one (attack 37, F11a).
        ({"repository": "example-org/nebius-dra.git", "projectId": "project-e00x"}, "names no GitHub repository"),
        ({"repository": "example-org/..", "projectId": "project-e00x"}, "names no GitHub repository"),
        ({"repository": "example-org/.", "projectId": "project-e00x"}, "names no GitHub repository"),
        ({"repository": "o/r", "projectId": "project-e00x", "environment": "prod*"}, f"{NAMESPACE}:environment"),
        ({"repository": "o/r", "projectId": "project-e00x", "environment": "a:b"}, f"{NAMESPACE}:environment"),
        ({"repository": "o/r", "projectId": "project-e00x", "repositoryOwnerId": "1"}, f"{NAMESPACE}:repositoryId"),
        ({"repository": "o/r", "projectId": "project-e00x", "repositoryId": "many"}, f"{NAMESPACE}:repositoryId"),
        ({"repository": "o/r", "projectId": "project-e00x", "subject": "repo:o/r:*"}, f"{NAMESPACE}:subject"),
    ],
    ids=[
        "no-repository",
        "wildcard",
        "owner-only",
        "tenant",
        "dot-git",
        "dot-dot",
        "dot",
        "env-wildcard",
        "env-colon",
        "one-id",
        "id-text",
        "unknown",
    ],
)
def test_bad_config_stops_before_any_resource_naming_the_key(settings, said):
    run = bootstrap("dev", **settings)
    assert isinstance(run.error, ConfigError), run.error
    assert said in str(run.error)
    assert not [r for r in run.resources if r.type.startswith("nebius:")]


def test_the_project_file_declares_exactly_the_models_settings():
    """One list of settings: Pulumi.yaml's keys (which the CLI types and checks) are the model's fields."""
    assert set(declared_keys()) == set(CiIdentitySettings.model_fields)
    types = {"str": "string", "int": "integer", "bool": "boolean"}
    for key, spec in CiIdentitySettings.model_fields.items():
        assert declared_keys()[key] == types[spec.annotation.__name__], key


def test_the_offline_check_prints_the_identities_and_exits_by_the_verdict(capsys):
    assert check.main(["--stack", "dev"]) == check.EXIT_OK
    out = capsys.readouterr().out
    assert "deploy identity of dev: editor on project-e00dev0000000000000" in out
    assert "sub repo:example-org/nebius-dra:environment:dev" in out
    assert "preview identity of dev: viewer" in out and "sub repo:example-org/nebius-dra:pull_request" in out
    assert out.splitlines()[-1] == f"policy pack: pass, no finding ({len(RULES)} rules)"


def test_the_offline_checks_verdict_counts_what_the_pack_found():
    mandatory = Finding("ci-identity-roles", True, "urn:a", "x")
    advisory = Finding("ci-identity-trust", False, "urn:b", "y")
    assert check.verdict([mandatory, advisory]) == (
        f"policy pack: BLOCKED by 1 mandatory policy violation(s), 1 advisory finding(s) ({len(RULES)} rules)"
    )
    assert check.verdict([mandatory]).startswith("policy pack: BLOCKED by 1 mandatory")
    assert check.verdict([advisory]).startswith("policy pack: pass, 1 advisory finding(s)")


def test_the_offline_check_exits_2_on_a_config_it_refuses(tmp_path, monkeypatch, capsys):
    project = tmp_path / "ci_identity"
    project.mkdir()
    (project / "Pulumi.yaml").write_text((BOOTSTRAP / "Pulumi.yaml").read_text())
    (project / "__main__.py").write_text((BOOTSTRAP / "__main__.py").read_text())
    (project / "Pulumi.dev.yaml").write_text(f"config:\n  {NAMESPACE}:repository: octo-org/*\n")
    monkeypatch.setattr(check, "BOOTSTRAP_DIR", project)
    assert check.main(["--stack", "dev"]) == check.EXIT_CONFIG
    err = capsys.readouterr().err
    assert f"{NAMESPACE}:repository" in err and f"{NAMESPACE}:projectId: is empty" in err and "Traceback" not in err


def test_the_offline_check_echoes_a_stack_name_with_terminal_escapes_escaped(capsys):
    """A stack name is the user's text: its escape codes reach the terminal only as their JSON escapes."""
    assert check.main(["--stack", "dev\x1b]0;pwn\x07"]) == check.EXIT_CONFIG
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\\u001b]0;pwn\\u0007" in err, err


def test_the_check_of_a_partly_readable_stack_file_runs_the_bootstraps_checks_only(tmp_path, monkeypatch, capsys):
    """Once the stack file reader refused a key, the rest used to go through the main stack's checks: about 50
    `nebius-dra:...` problems (a required parentId, subnetId, ...) after the one real problem."""
    for name in ("Pulumi.yaml", "__main__.py"):
        (tmp_path / name).write_text((BOOTSTRAP / name).read_text())
    text = (
        (BOOTSTRAP / "Pulumi.dev.yaml")
        .read_text()
        .replace("project-e00dev0000000000000", "project-e00prod000000000000")
    )
    line = f"  {NAMESPACE}:repositoryId: many\n"
    (tmp_path / "Pulumi.dev.yaml").write_text(text + line)
    monkeypatch.setattr(check, "BOOTSTRAP_DIR", tmp_path)
    assert check.main(["--stack", "dev"]) == check.EXIT_CONFIG
    err = capsys.readouterr().err
    assert f'{NAMESPACE}:repositoryId: got "many", but Pulumi.yaml declares it integer' in err
    assert "and in the keys that could be read, invalid stack configuration (1 problem):" in err
    assert f'{NAMESPACE}:projectId: got "project-e00prod000000000000", but the dev stack' in err
    assert "nebius-dra:parentId" not in err and "nebius-dra:subnetId" not in err


def test_a_main_stack_key_in_the_bootstraps_stack_is_refused_not_ignored():
    """The CLI passes another namespace's keys on; the bootstrap never reads the main stack's, so says so."""
    run = bootstrap("dev", repository="o/r", projectId="project-e00dev0000000000000")
    assert run.error is None, run.error
    config = {f"{NAMESPACE}:repository": "o/r", f"{NAMESPACE}:projectId": "project-e00dev0000000000000"}
    run = run_program("dev", {**config, "nebius-dra:gpuNodeGroups": "[]"}, project_dir=BOOTSTRAP, project=PROJECT)
    assert isinstance(run.error, ConfigError) and run.resources == []
    assert "nebius-dra:gpuNodeGroups: is a key of the nebius-dra project, set in the bootstrap's stack" in str(
        run.error
    )
