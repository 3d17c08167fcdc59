"""The bootstrap's config, read once at the edge into one strict model, every problem named by its key.

The keys are declared (and typed) in this directory's `Pulumi.yaml`; the Pulumi CLI refuses an
undeclared one. What the CLI cannot check (the shapes of a repository, a project ID, an
environment name, the two GitHub IDs set together) is checked here, all at once, before any
resource is registered: `ConfigError` stops the run without a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from components.config.errors import ConfigProblems, add_validation_problems, shown
from components.config.reading import InputError, parse_json
from components.config.stack_file import StackFileConfig, StackFileError, declared_config, read_stack_file
from components.dra_constants import NAMESPACE as MAIN_NAMESPACE
from policies.dra_guardrails.identity_rules import ENVIRONMENT, OWNER, PROJECT_ID, REPOSITORY_NAME
from tools.ci_identity.subjects import GitHubRepository

NAMESPACE = "nebius-dra-ci-identity"
PROJECT_FILE = Path(__file__).with_name("Pulumi.yaml")


def ci_config_key(key: str) -> str:
    return f"{NAMESPACE}:{key}"


# The owner of the repository the shipped stack files name (Pulumi.dev.yaml and Pulumi.prod.yaml here): an example
# for a team to replace with its own, never one to trust. `make new-stack` does not copy it, and the offline check
# says it is there.
PLACEHOLDER_OWNER = "example-org"


def is_placeholder(repository: str) -> bool:
    """Whether OWNER/REPO is the shipped example's: GitHub's owner names are case-insensitive (EXAMPLE-ORG is it)."""
    return repository.partition("/")[0].lower() == PLACEHOLDER_OWNER


class CiIdentitySettings(BaseModel):
    """The stack config as typed: one repository, one environment, its project."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    repository: Annotated[
        str,
        Field(
            pattern=rf"^{OWNER}/{REPOSITORY_NAME}$",
            description="OWNER/REPO: an owner of 1-39 letters, digits and single '-' (none first or last), a "
            "repository of 1-100 letters, digits, '.', '-' and '_' (not . or ..)",
        ),
    ]

    @field_validator("repository")
    @classmethod
    def _a_name_github_gives(cls, value: str) -> str:
        # GitHub reserves `.` and `..` ("The repository . is reserved") and strips a trailing `.git` from a name it is
        # given (github.com/dead-claudia/github-limits, PRs 5 and 11): no token's subject names such a repository.
        owner, _, name = value.partition("/")
        if owner.endswith("-") or "--" in owner:
            # GitHub's owner names (a user's or an organization's) hold single hyphens, none first or last: no token's
            # subject names such an owner, so identities trusting it could never be used.
            raise ValueError(
                f"{shown(value)} names no GitHub repository: an owner's name is letters, digits and single hyphens, "
                "none first or last; write OWNER/REPO as the repository's page shows it"
            )
        if name in (".", "..") or name.endswith(".git"):
            raise ValueError(
                f"{shown(value)} names no GitHub repository: GitHub reserves . and .. and never ends a name in .git "
                "(it strips it); write OWNER/REPO as the repository's page shows it"
            )
        return value

    repositoryOwnerId: Annotated[int, Field(ge=0, le=10**20 - 1, description="the owner's numeric ID, or 0")] = 0
    repositoryId: Annotated[int, Field(ge=0, le=10**20 - 1, description="the repository's numeric ID, or 0")] = 0
    environment: Annotated[
        str, Field(pattern=rf"^{ENVIRONMENT}$", description="a GitHub environment name: letters, digits, '.', '-', '_'")
    ]
    projectId: Annotated[
        str,
        Field(pattern=PROJECT_ID.pattern.replace(r"\Z", "$"), description="a Nebius project ID such as project-e00..."),
    ]
    previewIdentity: bool = True


@dataclass(frozen=True)
class CiIdentityConfig:
    """What the bootstrap builds from: the repository as GitHub's subjects name it, the environment, the project."""

    repository: GitHubRepository
    environment: str
    project_id: str
    preview_identity: bool


def declared_keys(project_file: Path = PROJECT_FILE) -> dict[str, str]:
    """Key (without the namespace) to its declared Pulumi type, from this project's `Pulumi.yaml`."""
    declared = declared_config(project_file)
    prefix = f"{NAMESPACE}:"
    return {key[len(prefix) :]: spec.get("type", "string") for key, spec in declared.items() if key.startswith(prefix)}


def check_readable_config(readable: StackFileConfig, stack: str) -> CiIdentityConfig:
    """The bootstrap's own checks over the keys of a stack file that could be read (other namespaces are
    other programs' config, a provider's for instance, as the Pulumi CLI takes them)."""
    prefix = f"{NAMESPACE}:"
    return parse_ci_config({k[len(prefix) :]: v for k, v in readable.values.items() if k.startswith(prefix)}, stack)


def deploy_project_problem(environment: str, project_id: str) -> str | None:
    """Why `project_id` is not the project the environment's stack deploys to (its `nebius-dra:parentId`,
    read from `Pulumi.<environment>.yaml` beside the project): the one project the identities may act on."""
    try:
        values = read_stack_file(environment).values
    except StackFileError as unreadable:
        if unreadable.readable is None:
            return (
                f"got {shown(project_id)}, which cannot be checked against the project the {environment} stack "
                f"deploys to: {unreadable}; the environment is a stack of this repository (set environment)"
            )
        values = unreadable.readable.values
    parent = values.get(f"{MAIN_NAMESPACE}:parentId", "")
    if parent == project_id:
        return None
    deploys_to = f"to {shown(parent)}" if parent else f"to no project ({MAIN_NAMESPACE}:parentId is empty)"
    return (
        f"got {shown(project_id)}, but the {environment} stack (Pulumi.{environment}.yaml) deploys {deploys_to}; "
        "the identities' roles go on the project the environment's stack deploys to, and no other"
    )


def parse_ci_config(values: Mapping[str, str], stack: str, main_keys: Sequence[str] = ()) -> CiIdentityConfig:
    """The settings from the engine's config text (keys without the namespace); `ConfigError` names every bad key.

    `main_keys` are keys of the main project set in the bootstrap's stack: the CLI passes another namespace's
    keys on (a provider's), but the bootstrap never reads the main stack's, so each is refused, not ignored."""
    problems = ConfigProblems()
    for key in main_keys:
        problems.add(
            key,
            f"is a key of the {MAIN_NAMESPACE} project, set in the bootstrap's stack ({NAMESPACE}), which never "
            f"reads it: set it in the {MAIN_NAMESPACE} stack's file",
        )
    types = declared_keys()
    document: dict[str, object] = {}
    for key, text in values.items():
        if key not in types:
            problems.add(ci_config_key(key), f"is not a setting of the bootstrap; it takes {', '.join(sorted(types))}")
            continue
        if types[key] in ("integer", "boolean"):
            try:
                document[key] = parse_json(text, key)
            except InputError:
                problems.add(
                    ci_config_key(key),
                    f"{shown(text)} is not {'a whole number' if types[key] == 'integer' else 'true or false'}",
                )
                continue
        else:
            document[key] = text
    if not document.get("environment"):
        document["environment"] = stack
    empty = set()
    required = {"repository": "the repository the identities trust, OWNER/REPO", "projectId": "the stack's project-..."}
    for key, wanted in required.items():
        if not document.get(key):
            problems.add(ci_config_key(key), f"is empty; set {wanted} (`pulumi config set {key} ...` here)")
            document.pop(key, None)
            empty.add(key)
    try:
        settings = CiIdentitySettings.model_validate(document)
    except ValidationError as error:
        add_validation_problems(problems, error, document, CiIdentitySettings, skip=empty, where_for=ci_config_key)
        problems.raise_if_any()
        raise
    if bool(settings.repositoryOwnerId) != bool(settings.repositoryId):
        given = f"repositoryOwnerId {settings.repositoryOwnerId}, repositoryId {settings.repositoryId}"
        problems.add(
            ci_config_key("repositoryId" if settings.repositoryOwnerId else "repositoryOwnerId"),
            f"{given}: GitHub's immutable subject names both IDs, so set both or neither (0)",
        )
    if problem := deploy_project_problem(settings.environment, settings.projectId):
        problems.add(ci_config_key("projectId"), problem)
    problems.raise_if_any()
    owner, name = settings.repository.split("/")
    ids = (settings.repositoryOwnerId, settings.repositoryId) if settings.repositoryId else None
    return CiIdentityConfig(
        repository=GitHubRepository(owner, name, ids),
        environment=settings.environment,
        project_id=settings.projectId,
        preview_identity=settings.previewIdentity,
    )
