"""`make new-stack NAME=<stack> PARENT_ID=project-... SUBNET_ID=vpcsubnet-...`: a new stack, on the project's defaults.

Writes `Pulumi.<stack>.yaml` with the keys that have no default and nothing else: the project and
subnet the cluster is created in, and the one GPU group a stack must have. Every other key takes
`Pulumi.yaml`'s default, which is what a new stack is meant to get (Kubernetes 1.35, the
`dra-driver-nvidia-gpu` 0.4.1 chart): a copy of dev's file would pin dev's 1.34 and 25.12.0 instead.
It adds the stack to `.github/stacks.json`, the list the workflows preview and deploy in its order, with the
names of the variables that hold its identities: before the last listed stack (prod here, the one that waits
for its reviewers, keeps deploying last), or right after the stack `AFTER=<stack>` names. It writes the identity
bootstrap's stack file `tools/ci_identity/Pulumi.<stack>.yaml` too (the project is PARENT_ID, the repository
REPOSITORY=OWNER/REPO or the one the bootstrap's other stacks name, as dev's and prod's are committed; GitHub's
owner and repository IDs REPOSITORY_OWNER_ID and REPOSITORY_ID, which a repository created, renamed or transferred
on or after 2026-07-15 needs, or the ones the other stacks set for that repository). What it cannot do (the GitHub environment, the bootstrap's `pulumi up`) it prints as the next steps.

Exit status: 0 when the files are written, 2 when a value or `.github/stacks.json` is refused (nothing is
written then).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, ValidationError, model_validator

from components.config.errors import ConfigProblems, add_validation_problems, shown
from components.config.node_groups import NAME_LIMIT, SYSTEM_GROUP
from components.config.reading import load_json, parsed_arguments, printable
from components.config.stack import default_cluster_name_problem
from components.config.stack_file import PROJECT_DIR, StackFileError, committed_stacks, read_stack_file, stack_names
from components.input.fields import NEBIUS_ID_PATTERN, Shape, nebius_id_rule
from components.redaction import holds_a_token, redacted
from tools.ci_identity.config import NAMESPACE as BOOTSTRAP_NAMESPACE
from tools.ci_identity.config import OWNER, PLACEHOLDER_OWNER, REPOSITORY_NAME, CiIdentitySettings, is_placeholder
from tools.plan.stack_source import STACK_NAME_RULE, StackNameError, check_stack_name

STACKS_FILE = Path(".github") / "stacks.json"
BOOTSTRAP_DIR = Path("tools") / "ci_identity"
DEPLOY_IDENTITY_VARIABLE = "NEBIUS_DEPLOY_SERVICE_ACCOUNT_ID"
PREVIEW_IDENTITY_PREFIX = "NEBIUS_PREVIEW_SERVICE_ACCOUNT_ID_"
# OWNER/REPO's shape, the bootstrap's own pattern: a value of it holds no credential and may be quoted.
REPOSITORY_SHAPE = re.compile(rf"{OWNER}/{REPOSITORY_NAME}\Z")
EXIT_OK, EXIT_REFUSED = 0, 2
# The one GPU group a stack must have (gpuNodeGroups has no default): dev's single-GPU H200 node, whose
# driver preset the dated table lists for the new-stack minor, so the new stack plans without a finding.
FIRST_GPU_GROUP = """\
  # The one GPU group a stack must have: edit it (docs/configuration.md, gpuNodeGroups fields).
  nebius-dra:gpuNodeGroups:
    - name: h200
      platform: gpu-h200-sxm
      preset: 1gpu-16vcpu-200gb
      driversPreset: cuda13.0
      fixedNodeCount: 1
"""


class NewStackError(ValueError):
    """A value `make new-stack` cannot use; the message names the make variable."""


def _stack_name(value: str) -> str:
    try:
        return check_stack_name(value)
    except StackNameError:
        raise ValueError(f"got {shown(value)}; expected a stack name: {STACK_NAME_RULE}") from None


# A GitHub variable name (docs.github.com, "Naming conventions for configuration variables"): letters, digits, '_'.
VariableName = Annotated[
    str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,99}$", description="expected a GitHub variable name: A-Z, 0-9, _")
]


class StackEntry(Shape):
    """One stack of `.github/stacks.json`: the fields the workflows' matrix reads (`matrix.stack`,
    `matrix.previewIdentityVariable`, `matrix.deployIdentityVariable`), each needed by its login."""

    stack: Annotated[str, AfterValidator(_stack_name), Field(description=f"expected a stack name: {STACK_NAME_RULE}")]
    previewIdentityVariable: VariableName
    deployIdentityVariable: VariableName


class StackList(Shape):
    """The whole file: the stacks the workflows preview and deploy, in deploy order, each once."""

    stacks: Annotated[
        list[StackEntry],
        Field(description="expected a list of {stack, previewIdentityVariable, deployIdentityVariable}"),
    ]

    @model_validator(mode="after")
    def _each_once(self) -> StackList:
        names = [entry.stack for entry in self.stacks]
        doubled = sorted({name for name in names if names.count(name) > 1})
        if doubled:
            raise ValueError(
                f"lists {', '.join(doubled)} more than once; list each stack once (the workflows would run it twice)"
            )
        # A preview identity is a viewer on its own stack's project: shared, one stack's pull-request previews would
        # log in as another's. (The deploy variable is one name on purpose: each GitHub environment sets its own.)
        previews = [entry.previewIdentityVariable for entry in self.stacks]
        for variable in sorted({variable for variable in previews if previews.count(variable) > 1}):
            sharing = [entry.stack for entry in self.stacks if entry.previewIdentityVariable == variable]
            raise ValueError(
                f"stacks {' and '.join(sharing)} share the previewIdentityVariable {variable}: each stack's previews "
                "log in as its own preview identity; give each stack its own variable"
            )
        return self


class _StacksDocument(Shape):
    """The file as one field, so that each problem reads `<file>: stacks[0].stack ...`."""

    file: StackList = Field(description='expected a map {"stacks": [...]}')


def preview_identity_variable(stack: str) -> str:
    """The repository variable of the stack's preview identity: GitHub allows letters, digits and `_` only."""
    return PREVIEW_IDENTITY_PREFIX + re.sub(r"[^A-Z0-9]", "_", stack.upper())


def stack_file_text(stack: str, parent_id: str, subnet_id: str) -> str:
    return (
        "# yaml-language-server: $schema=./docs/stack-file.schema.json\n"
        f"# {stack}: written by `make new-stack`. Every key it leaves out takes Pulumi.yaml's default, which moves\n"
        "# with the project (docs/configuration.md lists each key and its default).\n"
        "config:\n"
        f"  nebius-dra:parentId: {parent_id}\n"
        f"  nebius-dra:subnetId: {subnet_id}\n" + FIRST_GPU_GROUP
    )


def bootstrap_text(stack: str, repository: tuple[str, int, int], project_id: str) -> str:
    """The identity bootstrap's stack file, as dev's and prod's: the repository the identities trust (with GitHub's
    owner and repository IDs when the other stacks set them) and the project the stack deploys to."""
    name, owner_id, repository_id = repository
    ids = (
        f"  {BOOTSTRAP_NAMESPACE}:repositoryOwnerId: {owner_id}\n  {BOOTSTRAP_NAMESPACE}:repositoryId: {repository_id}\n"
        if repository_id
        else ""
    )
    return (
        f"# Keyless CI identities for the {stack} stack, written by `make new-stack`; see Pulumi.dev.yaml.\n"
        "config:\n"
        f"  {BOOTSTRAP_NAMESPACE}:repository: {name}\n{ids}"
        f"  {BOOTSTRAP_NAMESPACE}:projectId: {project_id}\n"
    )


def bootstrap_repository(given: str, bootstrap_dir: Path, name: str, project_id: str) -> tuple[str, int, int]:
    """The repository the new stack's identities trust, with its GitHub IDs (0 when not set): REPOSITORY, checked
    by the bootstrap's own rule, or else the one that every stack of the bootstrap names already."""
    named: dict[str, tuple[str, int, int]] = {}
    for stack in stack_names(bootstrap_dir):
        try:
            values = read_stack_file(stack, bootstrap_dir).values
        except StackFileError as unreadable:
            raise NewStackError(
                f"{BOOTSTRAP_DIR / f'Pulumi.{stack}.yaml'} cannot be read, and new-stack takes the repository and its "
                f"IDs from the bootstrap's stacks: {unreadable}"
            ) from None
        repository, owner_id, repository_id = (
            values.get(f"{BOOTSTRAP_NAMESPACE}:{key}", "")
            for key in ("repository", "repositoryOwnerId", "repositoryId")
        )
        named[stack] = (repository, int(owner_id or 0), int(repository_id or 0))
    agreed = set(named.values())
    if given:
        document = {"repository": given, "environment": name, "projectId": project_id}
        try:
            CiIdentitySettings.model_validate(document)
        except ValidationError as error:
            problems = ConfigProblems()
            add_validation_problems(problems, error, document, CiIdentitySettings, where_for=lambda key: key)
            if not REPOSITORY_SHAPE.match(given):
                # Not even OWNER/REPO's characters: shown as `shown` may (a URL with a token in it,
                # https://<token>@github.com/o/r or git@github.com:o/r#x, by its shape), and its rule told.
                raise NewStackError(
                    f"REPOSITORY={shown(given)} is not "
                    f"{CiIdentitySettings.model_fields['repository'].description}; give OWNER/REPO alone, never a URL"
                ) from None
            raise NewStackError(f"REPOSITORY={shown(given)}: {'; '.join(problems.lines)}") from None
        if is_placeholder(given):
            raise NewStackError(
                f"REPOSITORY={shown(given)} is the project's example ({PLACEHOLDER_OWNER}/...), not your repository: "
                "give the GitHub repository whose workflows the new stack's CI identities trust"
            )
        if holds_a_token(given):
            # OWNER/REPO's characters take a GitHub token (`own/ghp_...`): a token pasted for the name would be written
            # into the bootstrap's stack file and trusted as a repository. Shown redacted, never as given.
            raise NewStackError(
                f"REPOSITORY={shown(given)}: its owner or name has the form of a token (ghp_, gho_, ghu_, ghs_, ghr_, "
                "github_pat_ and the other forms the redactor hides), which no repository is named by; give OWNER/REPO "
                "as the repository's page shows it, and keep the token out of every file"
            )
        # The IDs belong to the repository: kept only when the other stacks name this one, and agree on them.
        return agreed.pop() if len(agreed) == 1 and next(iter(agreed))[0] == given else (given, 0, 0)
    if len(agreed) == 1 and next(iter(agreed))[0]:
        taken = agreed.pop()
        if is_placeholder(taken[0]):
            # The shipped example's repository: copied, the new stack's identities would trust whoever owns that
            # name on GitHub, and its deploys would fail to log in (newcomer round 4).
            raise NewStackError(
                f"REPOSITORY is empty, and the identity bootstrap's stacks in {BOOTSTRAP_DIR} name {shown(taken[0])}, "
                "the project's example, not your repository: give REPOSITORY=OWNER/REPO, the GitHub repository whose "
                "workflows the new stack's CI identities trust (and set it in the other stacks' files there too)"
            )
        return taken
    told = ", ".join(
        f"{stack}: {repo or 'none'}" + (f" (IDs {owner}/{repo_id})" if repo_id else "")
        for stack, (repo, owner, repo_id) in named.items()
    )
    raise NewStackError(
        "REPOSITORY is empty, and the identity bootstrap's stacks in "
        f"{BOOTSTRAP_DIR} name no one repository to take ({told or 'it has none'}): give REPOSITORY=OWNER/REPO, the "
        "GitHub repository whose workflows the new stack's CI identities trust"
    )


def stacks_file_text(stacks: Sequence[dict[str, Any]]) -> str:
    """`.github/stacks.json` as this tool writes it, so that adding a stack is a diff of one entry."""
    return json.dumps({"stacks": list(stacks)}, indent=2) + "\n"


def read_stacks(path: Path) -> list[dict[str, Any]]:
    """The workflows' stack list, checked whole (`StackList`) before anything is written: an entry of another shape,
    a key the workflows do not read (which rewriting the file would drop) or a stack listed twice is refused."""
    document = {"file": load_json(path, str(path), NewStackError)}
    try:
        listed = _StacksDocument.model_validate(document).file
    except ValidationError as error:
        problems = ConfigProblems()
        add_validation_problems(problems, error, document, _StacksDocument, where_for=lambda _: str(path))
        raise NewStackError(
            "\n".join([f"{path} is not the workflows' stack list:", *(f"  - {line}" for line in problems.lines)])
        ) from None
    return [entry.model_dump() for entry in listed.stacks]


# GitHub's numeric IDs as the bootstrap takes them (tools/ci_identity/config.py: 1 to 10**20 - 1 when set, 0 is unset).
GITHUB_ID = re.compile(r"[1-9][0-9]{0,19}\Z")
GITHUB_IDS_HOWTO = "gh api repos/OWNER/REPO --jq '.owner.id, .id'"


def checked_github_ids(owner_id: str, repository_id: str) -> tuple[int, int] | None:
    """REPOSITORY_OWNER_ID and REPOSITORY_ID, both positive whole numbers or neither (None): GitHub's immutable subject
    names both, and the bootstrap refuses one without the other."""
    if not owner_id and not repository_id:
        return None
    given = {"REPOSITORY_OWNER_ID": owner_id, "REPOSITORY_ID": repository_id}
    for variable, value in given.items():
        if not value:
            other = next(name for name in given if name != variable)
            raise NewStackError(
                f"{variable} is empty but {other} is given: GitHub's immutable subject names both IDs, so give both "
                f"({GITHUB_IDS_HOWTO}) or neither"
            )
        if not GITHUB_ID.match(value):
            raise NewStackError(
                f"{variable}={shown(value)} is not a GitHub ID: expected a positive whole number of at most 20 digits "
                f"({GITHUB_IDS_HOWTO})"
            )
    return int(owner_id), int(repository_id)


def checked_id(variable: str, value: str, kind: str) -> str:
    if not value:
        raise NewStackError(f"{variable} is empty: give the ID of your Nebius {kind}, {variable}=<id>")
    if not (value.startswith(kind + "-") and re.fullmatch(NEBIUS_ID_PATTERN, value)):
        raise NewStackError(
            f"{variable}={shown(value)} is not the ID of a Nebius {kind}: expected {nebius_id_rule(kind)}"
        )
    return value


def insert_at(stacks: Sequence[dict[str, Any]], after: str) -> int:
    """Where the new entry goes: right after the stack `after` names; by default before the last stack, so that the
    stack deploying last (prod, behind its reviewers) still does, unless the list holds one stack or none."""
    names = [entry["stack"] for entry in stacks]
    if not after:
        return len(names) - 1 if len(names) > 1 else len(names)
    if any(character.isspace() for character in after):
        # Said apart from a name the list lacks: ' dev' reads as dev in the refusal's list of stacks.
        raise NewStackError(
            f"AFTER={shown(after)} has a blank in it, and a stack name has none: give one of {', '.join(names)} as it is "
            "listed"
        )
    if after not in names:
        raise NewStackError(f"AFTER={shown(after)} is not a stack of {STACKS_FILE}: give one of {', '.join(names)}")
    return names.index(after) + 1


def new_stack(
    name: str,
    parent_id: str,
    subnet_id: str,
    project_dir: Path = PROJECT_DIR,
    after: str = "",
    repository: str = "",
    github_ids: tuple[str, str] = ("", ""),
) -> list[Path]:
    """Writes the stack file, the bootstrap's stack file and the stack's entry in the workflows' list; NewStackError
    before anything is written. `github_ids` (REPOSITORY_OWNER_ID, REPOSITORY_ID), when given, are the trusted
    repository's IDs in place of any the bootstrap's other stacks set."""
    ids = checked_github_ids(*github_ids)
    if not name:
        raise NewStackError("NAME is empty: give the new stack's name, make new-stack NAME=<stack>")
    try:
        check_stack_name(name)
    except StackNameError:
        raise NewStackError(
            f"NAME={shown(name)} is not a Pulumi stack name: a stack name is {STACK_NAME_RULE}"
        ) from None
    if name.startswith("-"):
        # The next steps hand NAME to `pulumi stack init NAME`, which would read `-x` as one of its own options.
        raise NewStackError(
            f"NAME={shown(name)} starts with '-', which `pulumi stack init` reads as an option: start it with a letter or "
            "digit"
        )
    allowed = (
        f"a new stack's NAME is at most {NAME_LIMIT - len(f'dra--{SYSTEM_GROUP}')} lowercase letters, digits and '-', "
        "ending with a letter or digit (or set nebius-dra:clusterName in its file by hand)"
    )
    if problem := default_cluster_name_problem(name):
        raise NewStackError(f"NAME={shown(name)}: {problem}, so its plan is refused: {allowed}")
    system_group = f"dra-{name}-{SYSTEM_GROUP}"
    if len(system_group) > NAME_LIMIT:
        raise NewStackError(
            f"NAME={shown(name)}: its system node group {system_group} would be {len(system_group)} characters, over "
            f"Nebius's {NAME_LIMIT}, so its plan is refused: {allowed}"
        )
    stack_file = project_dir / f"Pulumi.{name}.yaml"
    stacks_path = project_dir / STACKS_FILE
    stacks = read_stacks(stacks_path)
    left_out = [stack for stack in committed_stacks(project_dir) if stack not in {entry["stack"] for entry in stacks}]
    if left_out:
        # Rewriting the list without them would leave those stacks deployed by no workflow (and the new one's place,
        # before the last stack, is prod's only while prod is listed).
        raise NewStackError(
            f"{STACKS_FILE} leaves out {', '.join(f'Pulumi.{stack}.yaml' for stack in left_out)}, committed "
            "stacks that no workflow would then preview or deploy: list every committed stack in it (its committed "
            "version does: git checkout -- .github/stacks.json), then run new-stack again"
        )
    if stack_file.exists() or stack_file.is_symlink():
        raise NewStackError(
            f"NAME={shown(name)}: {stack_file.name} exists already; choose another name or edit that file"
        )
    listed = {entry["stack"] for entry in stacks}
    if name in listed:
        raise NewStackError(f"NAME={shown(name)}: {STACKS_FILE} lists that stack already")
    preview = preview_identity_variable(name)
    taken = {entry["stack"] for entry in stacks if entry.get("previewIdentityVariable") == preview}
    if taken:
        raise NewStackError(
            f"NAME={shown(name)}: its preview variable {preview} is stack {sorted(taken)[0]!r}'s; choose another name"
        )
    position = insert_at(stacks, after)
    project_id = checked_id("PARENT_ID", parent_id, "project")
    text = stack_file_text(name, project_id, checked_id("SUBNET_ID", subnet_id, "vpcsubnet"))
    bootstrap_file = project_dir / BOOTSTRAP_DIR / stack_file.name
    if bootstrap_file.exists() or bootstrap_file.is_symlink():
        raise NewStackError(
            f"NAME={shown(name)}: {BOOTSTRAP_DIR / stack_file.name} exists already; choose another name"
        )
    trusted = bootstrap_repository(repository, project_dir / BOOTSTRAP_DIR, name, project_id)
    if ids:
        trusted = (trusted[0], *ids)
    entry = {"stack": name, "previewIdentityVariable": preview, "deployIdentityVariable": DEPLOY_IDENTITY_VARIABLE}
    for path, content in ((stack_file, text), (bootstrap_file, bootstrap_text(name, trusted, project_id))):
        with path.open("x", encoding="utf-8") as written:
            written.write(content)
    stacks_path.write_text(stacks_file_text([*stacks[:position], entry, *stacks[position:]]), encoding="utf-8")
    return [stack_file, bootstrap_file, stacks_path]


def deploy_order(name: str, project_dir: Path) -> str:
    """Where the new stack deploys, as written: the workflows deploy the list's stacks in its order."""
    names = [entry["stack"] for entry in read_stacks(project_dir / STACKS_FILE)]
    index = names.index(name)
    around = [f"after {names[index - 1]}"] if index else ["first"]
    around += [f"before {names[index + 1]}"] if index + 1 < len(names) else []
    return (
        f"deploys {', '.join(around)} ({' -> '.join(names)}): AFTER=<stack> puts a new stack after another, "
        f"or move its entry in {STACKS_FILE}"
    )


def next_steps(name: str, github_ids: bool = False) -> str:
    """What is left to do by hand; `github_ids`: the bootstrap's file has the repository's IDs."""
    ids = (
        ""
        if github_ids
        else f"""
  for a repository created, renamed or transferred on or after 2026-07-15 (GitHub's immutable subjects): add its
    IDs to {BOOTSTRAP_DIR / f"Pulumi.{name}.yaml"}, {BOOTSTRAP_NAMESPACE}:repositoryOwnerId and
    {BOOTSTRAP_NAMESPACE}:repositoryId, the two numbers {GITHUB_IDS_HOWTO} prints, or its
    CI login fails (new-stack writes them when given REPOSITORY_OWNER_ID and REPOSITORY_ID)"""
    )
    return f"""next, by hand (README, Adding a stack):
  make plan STACK={name}                      # plans it offline; edit its GPU group first
  pulumi stack init {name} --secrets-provider passphrase   # in your backend, with CI's passphrase; it updates the file
  add its row to the README's table of stacks{ids}
  for CI: the GitHub environment {shown(name)}, and the identity bootstrap's stack {shown(name)} in {BOOTSTRAP_DIR}
    (its file is written: check it with `venv/bin/python -m tools.ci_identity.check --stack {name}`, then
    create its stack there and `pulumi up` it as a Nebius admin, docs/ci.md), whose outputs go into the variables
    {DEPLOY_IDENTITY_VARIABLE} (environment {shown(name)}) and {preview_identity_variable(name)} (repository)
    (docs/ci.md, The stacks CI runs); until both are set, its preview and deploy fail at the login and
    fail-fast cancels the deploys listed after it
  last, once both are set: git add and commit Pulumi.{name}.yaml, {BOOTSTRAP_DIR / f"Pulumi.{name}.yaml"} and
    {STACKS_FILE} together (the tests fail until git tracks the stack file)"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.new_stack", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--name", default="", help="the stack's name (make's NAME)")
    parser.add_argument("--parent-id", default="", help="Nebius project ID, project-... (make's PARENT_ID)")
    parser.add_argument("--subnet-id", default="", help="VPC subnet ID, vpcsubnet-... (make's SUBNET_ID)")
    parser.add_argument("--after", default="", help="the listed stack it deploys after (make's AFTER)")
    parser.add_argument(
        "--repository",
        default="",
        help="OWNER/REPO the CI identities trust (make's REPOSITORY); default: the bootstrap's",
    )
    parser.add_argument(
        "--repository-owner-id",
        default="",
        help="GitHub's numeric ID of the repository's owner (make's REPOSITORY_OWNER_ID), with --repository-id",
    )
    parser.add_argument(
        "--repository-id",
        default="",
        help="GitHub's numeric ID of the repository (make's REPOSITORY_ID), needed by one created since 2026-07-15",
    )
    parser.add_argument("--project-dir", type=Path, default=PROJECT_DIR, help=argparse.SUPPRESS)
    args = parsed_arguments(parser, argv)
    try:
        written = new_stack(
            args.name,
            args.parent_id,
            args.subnet_id,
            args.project_dir,
            args.after,
            args.repository,
            (args.repository_owner_id, args.repository_id),
        )
    except NewStackError as refused:
        # Every refusal quotes what was given (NAME, AFTER, the IDs): through the one redactor, as every tool's output,
        # so a URL or `token=...` typed into one is not echoed (hostile round five).
        print(f"make new-stack: {printable(redacted(str(refused)), lines=True)}", file=sys.stderr)
        return EXIT_REFUSED
    for path in written:
        print(f"wrote {path.relative_to(args.project_dir)}")
    print(deploy_order(args.name, args.project_dir))
    # Read back as written (the IDs may come from the other stacks); an unset key reads as its default, 0.
    bootstrap = read_stack_file(args.name, args.project_dir / BOOTSTRAP_DIR).values
    print(next_steps(args.name, github_ids=bootstrap.get(f"{BOOTSTRAP_NAMESPACE}:repositoryId", "0") != "0"))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
