"""`make new-stack`: a stack on the project's defaults that plans clean, previewed and deployed like dev and prod."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from components.config.stack_file import PROJECT_DIR, read_stack_file
from components.shown import shown
from tools import new_stack
from tools.ci_identity import check
from tools.ci_identity import config as ci_config

STACKS_FILE = PROJECT_DIR / new_stack.STACKS_FILE
PROJECT_ID, SUBNET_ID = "project-e00staging000000000", "vpcsubnet-e00staging00000000"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The project file, the workflows' stack list and the bootstrap's files, where a new stack may be written."""
    (tmp_path / ".github").mkdir()
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copy(STACKS_FILE, tmp_path / new_stack.STACKS_FILE)
    shutil.copytree(PROJECT_DIR / new_stack.BOOTSTRAP_DIR, tmp_path / new_stack.BOOTSTRAP_DIR, ignore=IGNORED)
    # As a team has them once it set its own repository in dev's and prod's files, as docs/ci.md says to.
    for stack in ("dev", "prod"):
        path = tmp_path / new_stack.BOOTSTRAP_DIR / f"Pulumi.{stack}.yaml"
        path.write_text(path.read_text().replace(f"{SHIPPED_REPOSITORY}\n", f"{TEAM_REPOSITORY}\n"))
    return tmp_path


SHIPPED_REPOSITORY, TEAM_REPOSITORY = "example-org/nebius-dra", "acme-ml/nebius-dra"


IGNORED = shutil.ignore_patterns("__pycache__")


def entry(stack: str) -> dict[str, str]:
    """A stack's entry as `make new-stack` writes it."""
    return {
        "stack": stack,
        "previewIdentityVariable": new_stack.preview_identity_variable(stack),
        "deployIdentityVariable": new_stack.DEPLOY_IDENTITY_VARIABLE,
    }


def declared() -> dict:
    return yaml.safe_load((PROJECT_DIR / "Pulumi.yaml").read_text())["config"]


def test_the_new_stack_holds_the_keys_without_a_default_and_nothing_else(project):
    assert new_stack.main(["--name", "staging", "--parent-id", PROJECT_ID, "--subnet-id", SUBNET_ID, "--project-dir", str(project)]) == 0  # fmt: skip
    text = (project / "Pulumi.staging.yaml").read_text()
    assert text.startswith("# yaml-language-server: $schema=./docs/stack-file.schema.json\n")
    config = yaml.safe_load(text)
    assert set(config) == {"config"}
    without_default = {key for key, spec in declared().items() if "default" not in spec}
    # parentId and subnetId default to "" (existing-cluster mode needs neither) but a cluster needs both.
    assert set(config["config"]) == without_default | {"nebius-dra:parentId", "nebius-dra:subnetId"}
    assert config["config"]["nebius-dra:parentId"] == PROJECT_ID
    assert config["config"]["nebius-dra:subnetId"] == SUBNET_ID


def test_the_new_stack_plans_clean_on_the_new_stack_defaults(project):
    new_stack.new_stack("staging", PROJECT_ID, SUBNET_ID, project)
    stack_file = str(project / "Pulumi.staging.yaml")
    planned = subprocess.run(
        [sys.executable, "-m", "tools.plan", "--stack-file", stack_file, "--format", "json", "--out", "none"],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert planned.returncode == 0, planned.stderr
    plan = json.loads(planned.stdout)
    assert plan["ok"] and plan["error"] is None and plan["findings"] == [], "no finding at all, advisory included"
    defaults = declared()
    assert plan["draDriver"]["chart"] == defaults["nebius-dra:draDriverChart"]["default"]
    assert f'"version": "{defaults["nebius-dra:kubernetesVersion"]["default"]}"' in json.dumps(plan["tree"])
    assert defaults["nebius-dra:kubernetesVersion"]["default"] == "1.35", "new stacks default to 1.35"
    assert plan["draDriver"] == {"chart": "dra-driver-nvidia-gpu", "version": "0.4.1"}, "and the 0.4.1 chart"


ENTRY = {
    "stack": "stage-2-eu",
    "previewIdentityVariable": "NEBIUS_PREVIEW_SERVICE_ACCOUNT_ID_STAGE_2_EU",
    "deployIdentityVariable": "NEBIUS_DEPLOY_SERVICE_ACCOUNT_ID",
}


def test_the_new_stack_joins_the_workflows_list_with_its_identities_before_the_last_stack(project, capsys):
    """dev, prod becomes dev, the new stack, prod: prod, behind its reviewers, still deploys last."""
    dev, prod = json.loads((project / new_stack.STACKS_FILE).read_text())["stacks"]
    args = ["--name", "stage-2-eu", "--parent-id", PROJECT_ID, "--subnet-id", SUBNET_ID, "--project-dir", str(project)]
    assert new_stack.main(args) == 0
    assert json.loads((project / new_stack.STACKS_FILE).read_text())["stacks"] == [dev, ENTRY, prod]
    assert "deploys after dev, before prod (dev -> stage-2-eu -> prod): AFTER=<stack>" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("listed", "after", "order"),
    [
        (["dev", "prod"], "prod", ["dev", "prod", "stage-2-eu"]),
        (["dev", "prod"], "dev", ["dev", "stage-2-eu", "prod"]),
        (["dev", "qa", "prod"], "", ["dev", "qa", "stage-2-eu", "prod"]),
        (["dev"], "", ["dev", "stage-2-eu"]),
        ([], "", ["stage-2-eu"]),
    ],
)
def test_after_names_the_stack_it_deploys_after_and_the_default_keeps_the_last_stack_last(
    project, listed, after, order
):
    (project / new_stack.STACKS_FILE).write_text(new_stack.stacks_file_text([entry(name) for name in listed]))
    new_stack.new_stack("stage-2-eu", PROJECT_ID, SUBNET_ID, project, after=after)
    after_write = json.loads((project / new_stack.STACKS_FILE).read_text())["stacks"]
    assert [entry["stack"] for entry in after_write] == order
    assert after_write[order.index("stage-2-eu")] == ENTRY


def test_the_committed_list_is_written_as_the_tool_writes_it():
    """So that `make new-stack` changes one entry of it, never the layout of the others."""
    text = STACKS_FILE.read_text()
    assert new_stack.stacks_file_text(json.loads(text)["stacks"]) == text


@pytest.mark.parametrize(
    ("name", "parent", "subnet", "named"),
    [
        ("", PROJECT_ID, SUBNET_ID, "NAME is empty"),
        ("bad name", PROJECT_ID, SUBNET_ID, 'NAME="bad name" is not a Pulumi stack name'),
        ("..", PROJECT_ID, SUBNET_ID, 'NAME=".." is not a Pulumi stack name'),
        ("a/b", PROJECT_ID, SUBNET_ID, 'NAME="a/b" is not a Pulumi stack name'),
        ("dev", PROJECT_ID, SUBNET_ID, 'NAME="dev": Pulumi.dev.yaml exists already'),
        ("listed", PROJECT_ID, SUBNET_ID, 'NAME="listed": .github/stacks.json lists that stack already'),
        ("stage-2", PROJECT_ID, SUBNET_ID, "its preview variable NEBIUS_PREVIEW_SERVICE_ACCOUNT_ID_STAGE_2 is stack"),
        (
            "--help",
            PROJECT_ID,
            SUBNET_ID,
            "NAME=\"--help\" starts with '-', which `pulumi stack init` reads as an option",
        ),
        ("-x", PROJECT_ID, SUBNET_ID, "NAME=\"-x\" starts with '-', which `pulumi stack init` reads as an option"),
        *[
            (
                name,
                PROJECT_ID,
                SUBNET_ID,
                f'NAME={json.dumps(name)}: the default dra-<stack> gives "dra-{name}", which',
            )
            for name in ("Staging", ".hidden", "_", "a" * 60, "a" * 70, "stage-")
        ],
        (
            "a" * 53,
            PROJECT_ID,
            SUBNET_ID,
            f"NAME={json.dumps('a' * 53)}: its system node group dra-{'a' * 53}-system would be 64",
        ),
        ("staging", "", SUBNET_ID, "PARENT_ID is empty"),
        ("staging", "x:CANARY1@h", SUBNET_ID, 'PARENT_ID="<11 characters: letters, digits, :@; hidden: may be'),
        ("staging", PROJECT_ID, "\x1b[2J", 'SUBNET_ID="\\u001b[2J" is not the ID'),
        ("staging", "vpcsubnet-e00x", SUBNET_ID, 'PARENT_ID="vpcsubnet-e00x" is not the ID of a Nebius project'),
        ("staging", PROJECT_ID, "project-e00x\n", 'SUBNET_ID="project-e00x\\n" is not the ID of a Nebius vpcsubnet'),
        ("staging", PROJECT_ID, SUBNET_ID, 'AFTER="qa" is not a stack of .github/stacks.json: give one of dev, prod,'),
        # Attack4 #2: a token glued to an ID's start was quoted whole.
        (
            "staging",
            PROJECT_ID,
            "vpcsubnet-e00ghp_CANARY0123456789abcdefghijklmnopqrst",
            'SUBNET_ID="<53 characters: letters, digits, -_; hidden: may be a credential>" is not the ID',
        ),
        (
            "staging",
            "project-e00ghp_CANARY0123456789abcdefghijklmnopqrst",
            SUBNET_ID,
            'PARENT_ID="<51 characters: letters, digits, -_; hidden: may be a credential>" is not the ID',
        ),
    ],
)
def test_a_bad_or_taken_name_or_id_is_refused_with_exit_2_naming_it_and_nothing_is_written(
    project, capsys, name, parent, subnet, named
):
    (project / "Pulumi.dev.yaml").write_text("config: {}\n")
    stacks = json.loads((project / new_stack.STACKS_FILE).read_text())["stacks"]
    stacks += [entry("listed"), entry("stage_2")]
    (project / new_stack.STACKS_FILE).write_text(new_stack.stacks_file_text(stacks))
    before = {path: path.read_text() for path in project.rglob("*") if path.is_file()}
    after = "qa" if "AFTER" in named else ""
    # As the Makefile passes them: --option=VALUE, so a NAME starting with '-' is a value.
    args = [f"--name={name}", f"--parent-id={parent}", f"--subnet-id={subnet}", f"--after={after}"]
    assert new_stack.main([*args, "--project-dir", str(project)]) == new_stack.EXIT_REFUSED
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err
    assert {path: path.read_text() for path in project.rglob("*") if path.is_file()} == before


def make_new_stack(*variables: str) -> subprocess.CompletedProcess[str]:
    """The refusal path through the real Makefile (it writes nothing)."""
    return subprocess.run(
        ["make", "--no-print-directory", "-o", "venv/.installed", "new-stack", *variables],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("name", ['x"; echo injected; "', "st$(x)aging", "st$$aging"])
def test_make_new_stack_hands_the_values_to_the_tool_unparsed_by_the_shell(name):
    """The value reaches the tool as given, by neither the shell nor make expanded (hostile review: make read
    NAME='st$(x)aging' as `staging` and wrote that stack)."""
    made = make_new_stack(f"NAME={name}")
    assert made.returncode == 2
    assert f"make new-stack: NAME={shown(name)} is not a Pulumi stack name" in made.stderr
    assert "injected\n" not in made.stdout


def test_make_new_stack_hands_after_to_the_tool():
    """AFTER reaches the tool: a stack the list lacks is refused, nothing is written."""
    made = make_new_stack("NAME=x", "AFTER=no-such-stack")
    assert made.returncode == 2
    assert 'make new-stack: AFTER="no-such-stack" is not a stack of .github/stacks.json' in made.stderr


@pytest.mark.parametrize(
    ("variables", "environment", "given"),
    [(["AFTER=dev "], {}, '"dev "'), (["AFTER=d\tev"], {}, '"d\\tev"'), ([], {"AFTER": " dev"}, '" dev"')],
)
def test_make_new_stack_refuses_an_after_with_a_blank_naming_it(variables, environment, given):
    """Hostile review: AFTER=' dev' was taken. make itself drops the blanks after a command line's '=' (GNU make
    manual 6.5, as in `AFTER = dev`), so the tool gets those only from the environment; a trailing one reaches it."""
    made = subprocess.run(
        ["make", "--no-print-directory", "-o", "venv/.installed", "new-stack", "NAME=x", *variables],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **environment},
    )
    assert made.returncode == 2, made.stderr
    assert f"make new-stack: AFTER={given} has a blank in it, and a stack name has none: give one of" in made.stderr


@pytest.mark.parametrize(
    ("listed", "named"),
    [
        ({"stacks": [{"stack": ["a"]}]}, 'stacks[0].stack got ["a"]; expected a stack name: 1 to 100 ASCII'),
        ({"stacks": [{**entry("dev"), "stack": None}]}, "stacks[0].stack got null; expected a stack name"),
        ({"stacks": [{"stack": 5}]}, "stacks[0].previewIdentityVariable is required; expected a GitHub variable"),
        ({"stacks": [], "extra": 1, "comment": "keep me"}, 'has unknown field(s) "comment"; allowed: stacks'),
        ({"stacks": [{**entry("dev"), "x": 1}]}, 'stacks[0] has unknown field(s) "x"; allowed: stack, preview'),
        ({"stacks": [entry("dev"), entry("dev")]}, "lists dev more than once; list each stack once"),
        (
            {
                "stacks": [
                    {**entry("dev"), "previewIdentityVariable": entry("prod")["previewIdentityVariable"]},
                    entry("prod"),
                ]
            },
            "stacks dev and prod share the previewIdentityVariable NEBIUS_PREVIEW_SERVICE_ACCOUNT_ID_PROD",
        ),
        ([], 'got []; expected a map {"stacks": [...]}'),
    ],
    ids=[
        "list-name",
        "null-name",
        "number-name",
        "unknown-top-level-key",
        "unknown-entry-key",
        "twice",
        "shared-preview-identity",
        "no-map",
    ],
)
def test_a_stack_list_the_workflows_could_not_run_is_refused_before_anything_is_written(project, capsys, listed, named):
    """Hostile review: a non-string stack was a traceback (after writing both files, for null), and unknown keys were
    dropped and duplicates kept when the file was rewritten."""
    stacks_path = project / new_stack.STACKS_FILE
    stacks_path.write_text(json.dumps(listed))
    before = {path: path.read_text() for path in project.rglob("*") if path.is_file()}
    args = ["--name", "staging", "--parent-id", PROJECT_ID, "--subnet-id", SUBNET_ID, "--after", "zz"]
    assert new_stack.main([*args, "--project-dir", str(project)]) == new_stack.EXIT_REFUSED
    err = capsys.readouterr().err
    assert f"make new-stack: {stacks_path} is not the workflows' stack list:\n" in err, err
    assert f"  - {stacks_path}: {named}" in err and "Traceback" not in err
    assert {path: path.read_text() for path in project.rglob("*") if path.is_file()} == before


@pytest.mark.parametrize(
    ("listed", "left_out"),
    [([], "Pulumi.dev.yaml, Pulumi.prod.yaml"), (["dev"], "Pulumi.prod.yaml")],
    ids=["empty", "prod-dropped"],
)
def test_a_stack_list_leaving_out_committed_stacks_is_refused_naming_their_files(project, capsys, listed, left_out):
    """Hostile review: `{"stacks": []}` was taken and rewritten without dev and prod, whose committed stack files no
    workflow would then deploy (and with prod dropped, the new stack went before dev)."""
    for stack in ("dev", "prod"):
        shutil.copy(PROJECT_DIR / f"Pulumi.{stack}.yaml", project / f"Pulumi.{stack}.yaml")
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    subprocess.run(["git", "-C", str(project), "add", "Pulumi.dev.yaml", "Pulumi.prod.yaml"], check=True, timeout=60)
    stacks_path = project / new_stack.STACKS_FILE
    stacks_path.write_text(json.dumps({"stacks": [entry(stack) for stack in listed]}))
    before = {path: path.read_text() for path in project.rglob("*") if path.is_file() and ".git" not in path.parts}
    args = ["--name", "zz", "--parent-id", PROJECT_ID, "--subnet-id", SUBNET_ID, "--project-dir", str(project)]
    assert new_stack.main(args) == new_stack.EXIT_REFUSED
    err = capsys.readouterr().err
    assert err.startswith(f"make new-stack: {new_stack.STACKS_FILE} leaves out {left_out}, committed stacks"), err
    after = {path: path.read_text() for path in project.rglob("*") if path.is_file() and ".git" not in path.parts}
    assert after == before


def test_an_untracked_stack_file_is_no_stack_the_list_must_name(project):
    """A scratch `Pulumi.try.yaml` (planned with STACK_FILE=...) is no committed stack: the docs' rule for the tests."""
    shutil.copy(PROJECT_DIR / "Pulumi.dev.yaml", project / "Pulumi.try.yaml")
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    assert new_stack.main(["--name", "zz", "--parent-id", PROJECT_ID, "--subnet-id", SUBNET_ID, "--project-dir", str(project)]) == 0  # fmt: skip


@pytest.mark.parametrize(("variable", "kind"), [("PARENT_ID", "project"), ("SUBNET_ID", "vpcsubnet")])
@pytest.mark.parametrize("suffix", ["a" * 57, "E00X", ""])
def test_an_id_refusal_states_the_rule_it_applies(project, capsys, variable, kind, suffix):
    """Hostile review: "expected project-<letters and digits>" let an uppercase or 57-character ID read as fitting."""
    ids = {"PARENT_ID": PROJECT_ID, "SUBNET_ID": SUBNET_ID, variable: f"{kind}-{suffix}"}
    args = ["--name", "staging", "--parent-id", ids["PARENT_ID"], "--subnet-id", ids["SUBNET_ID"]]
    assert new_stack.main([*args, "--project-dir", str(project)]) == new_stack.EXIT_REFUSED
    assert (
        f'{variable}="{kind}-{suffix}" is not the ID of a Nebius {kind}: expected {kind}- then 1 to 56 lowercase '
        "letters or digits"
    ) in capsys.readouterr().err


BOOTSTRAP_KEY = "nebius-dra-ci-identity"


def test_the_new_stack_gets_the_bootstraps_stack_file_which_its_check_passes(project, capsys, monkeypatch):
    """Newcomer's walk: dev's and prod's bootstrap files are committed, a new stack's was nobody's to write. Its
    repository is the one dev's and prod's name; its project is PARENT_ID, which the check requires."""
    args = ["--name", "staging", "--parent-id", PROJECT_ID, "--subnet-id", SUBNET_ID, "--project-dir", str(project)]
    assert new_stack.main(args) == 0
    assert f"wrote {new_stack.BOOTSTRAP_DIR}/Pulumi.staging.yaml\n" in capsys.readouterr().out
    bootstrap_dir = project / new_stack.BOOTSTRAP_DIR
    assert yaml.safe_load((bootstrap_dir / "Pulumi.staging.yaml").read_text()) == {
        "config": {f"{BOOTSTRAP_KEY}:repository": TEAM_REPOSITORY, f"{BOOTSTRAP_KEY}:projectId": PROJECT_ID}
    }
    # `python -m tools.ci_identity.check --stack staging`, on this copy of the project.
    monkeypatch.setattr(check, "BOOTSTRAP_DIR", bootstrap_dir)
    monkeypatch.setattr(ci_config, "read_stack_file", lambda stack: read_stack_file(stack, project))
    assert check.main(["--stack", "staging"]) == check.EXIT_OK
    out = capsys.readouterr().out
    assert f"deploy identity of staging: editor on {PROJECT_ID}" in out and "policy pack: pass" in out


def test_the_shipped_example_repository_is_not_copied_into_a_new_stack(project, capsys):
    """Newcomer round 4: dev's and prod's files as shipped name example-org/nebius-dra; new-stack copied it without a
    word and the check passed, so the new stack's identities would trust whoever owns that name on GitHub."""
    for stack in ("dev", "prod"):
        shipped = PROJECT_DIR / new_stack.BOOTSTRAP_DIR / f"Pulumi.{stack}.yaml"
        shutil.copy(shipped, project / new_stack.BOOTSTRAP_DIR / shipped.name)
    before = {path: path.read_text() for path in project.rglob("*") if path.is_file()}
    args = ["--name", "staging", "--parent-id", PROJECT_ID, "--subnet-id", SUBNET_ID, "--project-dir", str(project)]
    assert new_stack.main(args) == new_stack.EXIT_REFUSED
    assert (
        'name "example-org/nebius-dra", the project\'s example, not your repository: give REPOSITORY=OWNER/REPO'
    ) in capsys.readouterr().err
    assert {path: path.read_text() for path in project.rglob("*") if path.is_file()} == before
    # The check of a shipped stack, which still names it, says so beside each identity that trusts it.
    assert check.main(["--stack", "dev"]) == check.EXIT_OK
    out = capsys.readouterr().out
    assert out.count("the repository is the project's example (example-org/...), not yours") == 2


def _bootstrap_says(project: Path, stack: str, repository: str, ids: str = "") -> None:
    (project / new_stack.BOOTSTRAP_DIR / f"Pulumi.{stack}.yaml").write_text(
        f"config:\n  {BOOTSTRAP_KEY}:repository: {repository}\n{ids}  {BOOTSTRAP_KEY}:projectId: project-e00{stack}\n"
    )


def test_the_bootstraps_github_ids_follow_the_repository_they_belong_to(project):
    ids = f"  {BOOTSTRAP_KEY}:repositoryOwnerId: 7\n  {BOOTSTRAP_KEY}:repositoryId: 11\n"
    for stack in ("dev", "prod"):
        _bootstrap_says(project, stack, "org/repo", ids)
    new_stack.new_stack("staging", PROJECT_ID, SUBNET_ID, project)
    assert ids in (project / new_stack.BOOTSTRAP_DIR / "Pulumi.staging.yaml").read_text()
    new_stack.new_stack("qa", PROJECT_ID, SUBNET_ID, project, repository="other/repo")
    written = yaml.safe_load((project / new_stack.BOOTSTRAP_DIR / "Pulumi.qa.yaml").read_text())["config"]
    assert written == {f"{BOOTSTRAP_KEY}:repository": "other/repo", f"{BOOTSTRAP_KEY}:projectId": PROJECT_ID}


@pytest.mark.parametrize(
    ("repository", "prod_names", "named"),
    [
        ("", "other/repo", "REPOSITORY is empty, and the identity bootstrap's stacks in tools/ci_identity name no one "
         "repository to take (dev: acme-ml/nebius-dra, prod: other/repo): give REPOSITORY=OWNER/REPO"),
        ("no-slash", "", 'REPOSITORY="no-slash" is not OWNER/REPO'),
        # Hostile review: owners GitHub cannot have were written; harmless refused values were never shown.
        ("o-/r", "", 'REPOSITORY="o-/r": repository: "o-/r" names no GitHub repository: an owner\'s name is letters'),
        ("a--b/r", "", 'REPOSITORY="a--b/r": repository: "a--b/r" names no GitHub repository: an owner'),
        ("../../x/y", "", 'REPOSITORY="../../x/y" is not OWNER/REPO'),
        ("o/r.git", "", "REPOSITORY=\"o/r.git\": repository: \"o/r.git\" names no GitHub repository"),
        ("", None, "NAME=\"staging\": tools/ci_identity/Pulumi.staging.yaml exists already"),
        # Hostile round four: a URL or a token given as the repository was quoted before its `got` was redacted.
        ("https://CANARY4471R:x@github.com/o/r", "", 'REPOSITORY="<36 characters: letters, digits, ./:@; hidden'),
        ("CANARY4471R:pw@github.com/o/r", "", 'REPOSITORY="<29 characters'),
        ("git@github.com:o/r#CANARY4471F", "", 'REPOSITORY="<30 characters'),
        # Issue 37: OWNER/REPO's characters take a GitHub token, which was written into the bootstrap's file.
        ("own/ghp_CANARYabcdefghijklmnopqrstuvwxyz0123", "", 'REPOSITORY="<44 characters: letters, digits, /_; hidden: '
         "may be a credential>\": its owner or name has the form of a token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_"),
        ("gho_CANARYabcdefghijklmnopqrstuvwxyz0123/repo", "", 'REPOSITORY="<45 characters: letters, digits, /_; '
         "hidden: may be a credential>\" is not OWNER/REPO"),
        ("own/x-github_pat_CANARY_abcdefghijklmnopqrstuvwxyz", "", "its owner or name has the form of a token"),
        # Attack round 5: the shipped example, given (in any case), was taken.
        ("example-org/nebius-dra", "", "is the project's example (example-org/...), not your repository"),
        ("EXAMPLE-ORG/nebius-dra", "", "is the project's example (example-org/...), not your repository"),
    ],
    ids=["stacks-disagree", "not-owner-repo", "owner-ends-in-hyphen", "owner-double-hyphen", "dot-dot-path", "dot-git", "bootstrap-file-exists", "url", "userinfo", "scp-like", "token-name", "token-owner", "token-in-name", "example", "example-cased"],
)  # fmt: skip
def test_a_repository_the_bootstrap_cannot_take_is_refused_and_nothing_is_written(
    project, capsys, repository, prod_names, named
):
    if prod_names:
        _bootstrap_says(project, "prod", prod_names)
    if prod_names is None:
        _bootstrap_says(project, "staging", "org/repo")
    before = {path: path.read_text() for path in project.rglob("*") if path.is_file()}
    args = ["--name", "staging", "--parent-id", PROJECT_ID, "--subnet-id", SUBNET_ID, "--repository", repository]
    assert new_stack.main([*args, "--project-dir", str(project)]) == new_stack.EXIT_REFUSED
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err and "CANARY" not in err, err
    assert {path: path.read_text() for path in project.rglob("*") if path.is_file()} == before


@pytest.mark.parametrize("repository", ["nvidia/ghp-tools", "own/ghp_short", "ghs-org/github_pat_notes"])
def test_a_repository_named_like_a_token_prefix_but_shaped_as_none_is_taken(project, repository):
    """A token's prefix alone (`ghp_short`: fewer than the 20 characters after it every GitHub token has) is a name."""
    args = ["--name", "staging", "--parent-id", PROJECT_ID, "--subnet-id", SUBNET_ID, "--repository", repository]
    assert new_stack.main([*args, "--project-dir", str(project)]) == new_stack.EXIT_OK
    bootstrap = (project / "tools" / "ci_identity" / "Pulumi.staging.yaml").read_text()
    assert f":repository: {repository}\n" in bootstrap


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--name", "https://u:CANARY5582@x"),
        ("--after", "x?token=CANARY5582"),
        ("--subnet-id", "token=CANARY5582"),
        ("--parent-id", "https://u:CANARY5582@x"),
    ],
)
def test_a_refused_value_holding_a_credential_is_not_echoed(project, capsys, option, value):
    """Hostile round five: new-stack's refusals quote what was given, so they pass through the one redactor."""
    given = {"--name": "staging", "--parent-id": PROJECT_ID, "--subnet-id": SUBNET_ID, option: value}
    args = [part for pair in given.items() for part in pair]
    assert new_stack.main([*args, "--project-dir", str(project)]) == new_stack.EXIT_REFUSED
    err = capsys.readouterr().err
    assert err.startswith("make new-stack: ") and "CANARY5582" not in err, err


def test_github_ids_given_are_written_into_the_bootstraps_file_which_its_check_passes(project, capsys, monkeypatch):
    """Newcomer's walk: a repository created since 2026-07-15 sends GitHub's immutable subjects, whose IDs new-stack
    had no way to take; its file then held the name-only repository and CI's login failed at the token exchange."""
    args = ["--name", "staging", "--parent-id", PROJECT_ID, "--subnet-id", SUBNET_ID, "--project-dir", str(project)]
    assert new_stack.main([*args, "--repository-owner-id", "12", "--repository-id", "345"]) == 0
    assert "2026-07-15" not in capsys.readouterr().out
    bootstrap_dir = project / new_stack.BOOTSTRAP_DIR
    assert yaml.safe_load((bootstrap_dir / "Pulumi.staging.yaml").read_text())["config"] == {
        f"{BOOTSTRAP_KEY}:repository": TEAM_REPOSITORY,
        f"{BOOTSTRAP_KEY}:repositoryOwnerId": 12,
        f"{BOOTSTRAP_KEY}:repositoryId": 345,
        f"{BOOTSTRAP_KEY}:projectId": PROJECT_ID,
    }
    monkeypatch.setattr(check, "BOOTSTRAP_DIR", bootstrap_dir)
    monkeypatch.setattr(ci_config, "read_stack_file", lambda stack: read_stack_file(stack, project))
    assert check.main(["--stack", "staging"]) == check.EXIT_OK
    assert "repo:acme-ml@12/nebius-dra@345:environment:staging" in capsys.readouterr().out


def test_without_github_ids_the_next_steps_say_a_new_repository_needs_them(project, capsys):
    args = ["--name", "staging", "--parent-id", PROJECT_ID, "--subnet-id", SUBNET_ID, "--project-dir", str(project)]
    assert new_stack.main(args) == 0
    told = " ".join(capsys.readouterr().out.split())
    assert "for a repository created, renamed or transferred on or after 2026-07-15" in told
    assert f"{BOOTSTRAP_KEY}:repositoryOwnerId and {BOOTSTRAP_KEY}:repositoryId" in told
    assert "gh api repos/OWNER/REPO --jq '.owner.id, .id'" in told


@pytest.mark.parametrize(
    ("owner_id", "repository_id", "named"),
    [
        ("12", "", "REPOSITORY_ID is empty but REPOSITORY_OWNER_ID is given: GitHub's immutable subject names both"),
        ("", "345", "REPOSITORY_OWNER_ID is empty but REPOSITORY_ID is given"),
        ("0", "345", 'REPOSITORY_OWNER_ID="0" is not a GitHub ID: expected a positive whole number'),
        ("12", "-1", 'REPOSITORY_ID="-1" is not a GitHub ID'),
        ("12", "3e5", 'REPOSITORY_ID="3e5" is not a GitHub ID'),
        ("12", "012", 'REPOSITORY_ID="012" is not a GitHub ID'),
        (
            "1" * 21,
            "345",
            f'REPOSITORY_OWNER_ID="{"1" * 21}" is not a GitHub ID: expected a positive whole number of at',
        ),
    ],
)
def test_github_ids_that_are_not_two_positive_whole_numbers_are_refused_and_nothing_is_written(
    project, capsys, owner_id, repository_id, named
):
    before = {path: path.read_text() for path in project.rglob("*") if path.is_file()}
    args = ["--name", "staging", "--parent-id", PROJECT_ID, "--subnet-id", SUBNET_ID, "--project-dir", str(project)]
    ids = [f"--repository-owner-id={owner_id}", f"--repository-id={repository_id}"]
    assert new_stack.main([*args, *ids]) == new_stack.EXIT_REFUSED
    assert named in capsys.readouterr().err
    assert {path: path.read_text() for path in project.rglob("*") if path.is_file()} == before


def test_make_new_stack_hands_the_github_ids_to_the_tool():
    """Checked first, so that this run writes nothing into the project whatever else it is given."""
    made = make_new_stack("REPOSITORY_OWNER_ID=12", "REPOSITORY_ID=x1")
    assert made.returncode == 2
    assert 'make new-stack: REPOSITORY_ID="x1" is not a GitHub ID' in made.stderr
