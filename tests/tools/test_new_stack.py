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

from components.config.stack_file import PROJECT_DIR
from tools import new_stack

STACKS_FILE = PROJECT_DIR / new_stack.STACKS_FILE
PROJECT_ID, SUBNET_ID = "project-e00staging000000000", "vpcsubnet-e00staging00000000"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The project file and the workflows' stack list, where a new stack may be written."""
    (tmp_path / ".github").mkdir()
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copy(STACKS_FILE, tmp_path / new_stack.STACKS_FILE)
    return tmp_path


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
    (project / new_stack.STACKS_FILE).write_text(new_stack.stacks_file_text([{"stack": name} for name in listed]))
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
        ("bad name", PROJECT_ID, SUBNET_ID, "NAME='bad name' is not a Pulumi stack name"),
        ("..", PROJECT_ID, SUBNET_ID, "NAME='..' is not a Pulumi stack name"),
        ("a/b", PROJECT_ID, SUBNET_ID, "NAME='a/b' is not a Pulumi stack name"),
        ("dev", PROJECT_ID, SUBNET_ID, "NAME='dev': Pulumi.dev.yaml exists already"),
        ("listed", PROJECT_ID, SUBNET_ID, "NAME='listed': .github/stacks.json lists that stack already"),
        ("stage-2", PROJECT_ID, SUBNET_ID, "its preview variable NEBIUS_PREVIEW_SERVICE_ACCOUNT_ID_STAGE_2 is stack"),
        (
            "--help",
            PROJECT_ID,
            SUBNET_ID,
            "NAME='--help' starts with '-', which `pulumi stack init` reads as an option",
        ),
        ("-x", PROJECT_ID, SUBNET_ID, "NAME='-x' starts with '-', which `pulumi stack init` reads as an option"),
        *[
            (
                name,
                PROJECT_ID,
                SUBNET_ID,
                f'NAME={name!r}: the default dra-<stack> gives "dra-{name}", which',
            )
            for name in ("Staging", ".hidden", "_", "a" * 60, "a" * 70, "stage-")
        ],
        (
            "a" * 53,
            PROJECT_ID,
            SUBNET_ID,
            f"NAME={'a' * 53!r}: its system node group dra-{'a' * 53}-system would be 64",
        ),
        ("staging", "", SUBNET_ID, "PARENT_ID is empty"),
        ("staging", "vpcsubnet-e00x", SUBNET_ID, "PARENT_ID='vpcsubnet-e00x' is not the ID of a Nebius project"),
        ("staging", PROJECT_ID, "project-e00x\n", "SUBNET_ID='project-e00x\\n' is not the ID of a Nebius vpcsubnet"),
        ("staging", PROJECT_ID, SUBNET_ID, "AFTER='qa' is not a stack of .github/stacks.json: give one of dev, prod,"),
    ],
)
def test_a_bad_or_taken_name_or_id_is_refused_with_exit_2_naming_it_and_nothing_is_written(
    project, capsys, name, parent, subnet, named
):
    (project / "Pulumi.dev.yaml").write_text("config: {}\n")
    stacks = json.loads((project / new_stack.STACKS_FILE).read_text())["stacks"]
    stacks += [{"stack": "listed"}, {"stack": "stage_2", "previewIdentityVariable": "NEBIUS_PREVIEW_SERVICE_ACCOUNT_ID_STAGE_2"}]  # fmt: skip
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


def test_make_new_stack_hands_the_values_to_the_tool_unparsed_by_the_shell():
    """The value reaches the tool as given."""
    made = make_new_stack('NAME=x"; echo injected; "')
    assert made.returncode == 2
    assert "make new-stack: NAME='x\"; echo injected; \"' is not a Pulumi stack name" in made.stderr
    assert "injected\n" not in made.stdout


def test_make_new_stack_hands_after_to_the_tool():
    """AFTER reaches the tool: a stack the list lacks is refused, nothing is written."""
    made = make_new_stack("NAME=x", "AFTER=no-such-stack")
    assert made.returncode == 2
    assert "make new-stack: AFTER='no-such-stack' is not a stack of .github/stacks.json" in made.stderr


@pytest.mark.parametrize(
    ("variables", "environment", "given"),
    [(["AFTER=dev "], {}, "'dev '"), (["AFTER=d\tev"], {}, "'d\\tev'"), ([], {"AFTER": " dev"}, "' dev'")],
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
