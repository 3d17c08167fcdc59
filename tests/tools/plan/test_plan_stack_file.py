"""`--stack-file`: a stack file outside the stack list is planned and priced, and never changes what the tests check."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from components.config.stack_file import PROJECT_DIR, read_stack_file
from components.shown import shown
from tests.helpers import STACKS, committed_stacks
from tools.cost import __main__ as cost
from tools.plan import __main__ as plan
from tools.plan.stack_source import read_stack_source

GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"]


def _scratch(folder: Path, name: str = "Pulumi.try.yaml", like: str = "dev") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    shutil.copyfile(PROJECT_DIR / f"Pulumi.{like}.yaml", path)
    return path


def test_the_tested_stacks_are_the_committed_stack_files():
    assert STACKS == ("dev", "prod")


def test_an_untracked_stack_file_is_not_a_tested_stack(tmp_path):
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml", "Pulumi.prod.yaml"):
        shutil.copyfile(PROJECT_DIR / name, tmp_path / name)
    subprocess.run([*GIT, "init", "-q", str(tmp_path)], check=True)
    subprocess.run([*GIT, "-C", str(tmp_path), "add", "."], check=True)
    subprocess.run([*GIT, "-C", str(tmp_path), "commit", "-q", "-m", "stacks"], check=True)
    _scratch(tmp_path)
    assert committed_stacks(tmp_path) == ("dev", "prod")
    subprocess.run([*GIT, "-C", str(tmp_path), "add", "Pulumi.try.yaml"], check=True)
    assert committed_stacks(tmp_path) == ("dev", "prod", "try"), "a stack file added to git is tested"


def test_outside_a_git_checkout_every_stack_file_is_taken(tmp_path):
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml"):
        shutil.copyfile(PROJECT_DIR / name, tmp_path / name)
    _scratch(tmp_path)
    assert committed_stacks(tmp_path) == ("dev", "try")


def test_a_scratch_stack_file_in_a_copy_of_the_repository_breaks_no_test(tmp_path):
    """The failure issue 25 reports: the workflow matrices compared with every Pulumi.*.yaml on disk."""
    copy = tmp_path / "repo"
    tracked = subprocess.run(
        ["git", "-C", str(PROJECT_DIR), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for name in filter(None, tracked):
        if (PROJECT_DIR / name).is_file() and not (PROJECT_DIR / name).is_symlink():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(PROJECT_DIR / name, copy / name)
    subprocess.run([*GIT, "init", "-q", str(copy)], check=True)
    subprocess.run([*GIT, "-C", str(copy), "add", "."], check=True)
    subprocess.run([*GIT, "-C", str(copy), "commit", "-q", "-m", "copy"], check=True)
    _scratch(copy)
    pytest_run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts="]
    matrices = subprocess.run(
        [*pytest_run, "tests/test_workflows.py", "-k", "previews_every_stack or offline_plan_in_the_summary"],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert matrices.returncode == 0, matrices.stdout + matrices.stderr
    assert "2 passed" in matrices.stdout
    collected = subprocess.run(
        [
            *pytest_run,
            "--collect-only",
            "tests/tools/plan/test_plan.py",
            "tests/tools/cost/test_cost.py",
            "tests/tools/test_stack_schema.py",
        ],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert "[dev]" in collected.stdout and "[prod]" in collected.stdout
    assert not re.search(r"\btry\b", collected.stdout), "no test is parametrized by the scratch stack"


def test_a_stack_file_elsewhere_is_read_like_a_listed_one(tmp_path):
    path = _scratch(tmp_path, "Pulumi.dev.yaml")
    assert read_stack_source("dev", path) == read_stack_file("dev")
    document = yaml.safe_load(path.read_text())
    document["config"]["nebius-dra:existingClusterKubeconfig"] = {"secure": "v1:c2VjcmV0"}
    path.write_text(yaml.safe_dump(document))
    assert "nebius-dra:existingClusterKubeconfig" in read_stack_source("dev", path).secret_keys


def test_the_plan_of_a_stack_file_is_named_after_it_and_writes_under_its_name(tmp_path, capsys):
    path = _scratch(tmp_path / "variants")
    out = tmp_path / "out"
    assert plan.main(["--stack-file", str(path), "--format", "json", "--out", str(out)]) == plan.EXIT_OK
    document = json.loads(capsys.readouterr().out)
    assert document["stack"] == "try" and document["ok"] is True
    assert (out / "try" / "helm").is_dir() and not (out / "dev").exists()
    assert not (PROJECT_DIR / "Pulumi.try.yaml").exists()


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ("  nebius-dra:fixedNodeCont: 2\n", ":\n  - nebius-dra:fixedNodeCont: is set in {path} but"),
        ("  nebius-dra:x: [\n", " is not valid YAML"),
        ("confg: {}\n", ': unknown top-level key "confg"'),
    ],
)
def test_a_stack_file_problem_names_the_file_by_the_path_given_and_the_key(tmp_path, capsys, extra, problem):
    """Hostile review: a scratch /tmp/t/Pulumi.dev.yaml was named Pulumi.dev.yaml, as the repository's is."""
    path = _scratch(tmp_path)
    path.write_text(path.read_text() + extra)
    assert plan.main(["--stack-file", str(path), "--out", "none"]) == plan.EXIT_PROGRAM
    err = capsys.readouterr().err
    assert f"\n{path}{problem.format(path=path)}" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("try.yaml", "the file name must be a file named Pulumi.<stack>.yaml"),
        ("Pulumi.try.yml", "the file name must be a file named Pulumi.<stack>.yaml"),
        ("Pulumi..yaml", "the file name must be a file named Pulumi.<stack>.yaml"),
        ("Pulumi.a b.yaml", '"a b" is not a stack name'),
    ],
)
@pytest.mark.parametrize("tool", [plan, cost])
def test_a_file_not_named_as_a_stack_file_is_refused_naming_the_flag(tmp_path, capsys, tool, name, expected):
    path = _scratch(tmp_path, name)
    assert tool.main(["--stack-file", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"--stack-file {json.dumps(str(path))}: " in err and expected in err
    assert "1 to 100 ASCII letters, digits, '-', '_' or '.'" in err and "Traceback" not in err


@pytest.mark.parametrize("name", ["Pulumi.user:CANARYPW@x.yaml", "user:CANARYPW@x.yaml", "Pulumi.a\x1bb.yaml"])
@pytest.mark.parametrize("tool", [plan, cost])
def test_a_stack_file_path_is_quoted_as_shown_quotes_it_never_as_pythons_repr(tmp_path, capsys, tool, name):
    """A repr-quoted path ('...') escaped the redactor: the credential in a file name was printed (attack2 A9)."""
    path = _scratch(tmp_path, name)
    assert tool.main(["--stack-file", str(path)]) == 2
    err = capsys.readouterr().err
    assert "CANARY" not in err and "'" + str(tmp_path) not in err, err
    assert "--stack-file " + ('"<' if "CANARY" in name else json.dumps(str(path))) in err, err


@pytest.mark.parametrize("tool", [plan, cost])
def test_a_missing_stack_file_is_refused(tmp_path, capsys, tool):
    assert tool.main(["--stack-file", str(tmp_path / "Pulumi.gone.yaml")]) == 2
    assert f"--stack-file {shown(str(tmp_path / 'Pulumi.gone.yaml'))}: no such file" in capsys.readouterr().err


@pytest.mark.parametrize("tool", [plan, cost])
def test_a_stack_and_a_stack_file_together_are_refused(tmp_path, capsys, tool):
    with pytest.raises(SystemExit) as refused:
        tool.main(["--stack", "prod", "--stack-file", str(_scratch(tmp_path))])
    assert refused.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_the_cost_of_a_stack_file_is_the_cost_of_its_config(tmp_path, capsys):
    path = _scratch(tmp_path, like="prod")
    assert cost.main(["--stack", "prod", "--format", "json"]) == cost.EXIT_OK
    listed = json.loads(capsys.readouterr().out)
    assert cost.main(["--stack-file", str(path), "--format", "json"]) == cost.EXIT_OK
    scratch = json.loads(capsys.readouterr().out)
    assert scratch["stack"] == "try" and scratch["cost"]["total"] == listed["cost"]["total"]
    assert cost.main(["--stack-file", str(path), "--base", "HEAD"]) == cost.EXIT_OK
    assert "HEAD has no stack try: the whole cost is new" in capsys.readouterr().out


def test_make_plan_and_cost_take_stack_file(tmp_path):
    path = _scratch(tmp_path)
    done = subprocess.run(
        ["make", "--silent", "plan", f"STACK_FILE={path}", "FORMAT=json", "OUT=none"],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stack"] == "try"
    for target in ("plan", "cost"):
        alone = subprocess.run(
            ["make", "-n", target, f"STACK_FILE={path}"], cwd=PROJECT_DIR, capture_output=True, text=True, check=True
        ).stdout
        # make hands the values to the tool through the environment, never through the shell's parser.
        assert '--stack-file="$STACK_FILE"' in alone and "--stack=" not in alone
        both = subprocess.run(
            ["make", "-n", target, f"STACK_FILE={path}", "STACK=prod"],
            cwd=PROJECT_DIR,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert '--stack-file="$STACK_FILE" --stack="$STACK"' in both, "both reach the tool, which refuses the pair"


def test_adding_a_stack_in_the_docs_names_tests_that_exist():
    page = (PROJECT_DIR / "docs" / "operating.md").read_text()
    section = page.split("## Adding a stack\n", 1)[1].split("\n## ", 1)[0]
    files = re.findall(r"`(tests/[\w/]+\.py)`", section)
    tests = re.findall(r"`(test_\w+)`", section)
    assert files and len(tests) >= 3
    defined = "\n".join((PROJECT_DIR / name).read_text() for name in files)
    for name in tests:
        assert f"\ndef {name}(" in defined, f"operating.md's Adding a stack names {name}, which none of {files} defines"


def test_a_misspelt_stack_file_key_comes_with_every_problem_of_the_keys_that_could_be_read(tmp_path, capsys):
    """Issue 25: a key typo was reported alone; what its absence leaves wrong, and the rest, came a round later."""
    path = _scratch(tmp_path)
    text = path.read_text()
    assert "nebius-dra:subnetId:" in text and 'nebius-dra:kubernetesVersion: "1.34"' in text
    text = text.replace("nebius-dra:subnetId:", "nebius-dra:subnetID:")
    path.write_text(text.replace('nebius-dra:kubernetesVersion: "1.34"', 'nebius-dra:kubernetesVersion: "1.33"'))
    assert plan.main(["--stack-file", str(path), "--out", "none"]) == plan.EXIT_PROGRAM
    err = capsys.readouterr().err
    assert f"nebius-dra:subnetID: is set in {path} but Pulumi.yaml does not declare it" in err
    assert "did you mean nebius-dra:subnetId?" in err
    assert "invalid stack configuration (2 problems; checks that read a refused value run once it is fixed)" in err
    assert "nebius-dra:subnetId: is required" in err and "nebius-dra:kubernetesVersion" in err
    assert "Traceback" not in err


def test_a_refused_password_is_one_problem_not_also_an_empty_one(tmp_path, capsys):
    """Attack 2, #14: a plain numeric chartRepositoryPassword was refused for its type and, in the same run, reported
    empty (its absence read as ""); only the first is its cause. The other problems of the readable keys still come."""
    path = _scratch(tmp_path)
    text = path.read_text().replace('nebius-dra:kubernetesVersion: "1.34"', 'nebius-dra:kubernetesVersion: "1.33"')
    login = "  nebius-dra:chartRepositoryUsername: robot\n  nebius-dra:chartRepositoryPassword: 1234\n"
    path.write_text(text + "  nebius-dra:draDriverRepository: https://harbor.example.com/charts\n" + login)
    assert plan.main(["--stack-file", str(path), "--out", "none"]) == plan.EXIT_PROGRAM
    err = capsys.readouterr().err
    assert "nebius-dra:chartRepositoryPassword: got [secret], but Pulumi.yaml declares it string" in err
    assert "is empty" not in err and "1234" not in err
    assert "invalid stack configuration (1 problem; " in err and "nebius-dra:kubernetesVersion" in err
