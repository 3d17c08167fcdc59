"""`--base REF` and the repository's policy config: what a pull request's offline plan is compared with and judged by."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from components.config.stack_file import PROJECT_DIR
from policies.dra_guardrails import validate_policy_config
from tests.helpers import UNLISTED_MINOR_POLICY
from tools.plan import __main__ as plan
from tools.plan import base_plan
from tools.plan.base_plan import NoBaselineError
from tools.plan.baseline import BaselineError, read_baseline

REPOSITORY_POLICY_CONFIG = PROJECT_DIR / "policies" / "policy-config.json"


def _json_plan(capsys, *args: str) -> tuple[int, dict]:
    status = plan.main([*args, "--format", "json", "--out", "none"])
    return status, json.loads(capsys.readouterr().out)


def test_the_repository_policy_config_is_one_the_plan_accepts():
    validate_policy_config(json.loads(REPOSITORY_POLICY_CONFIG.read_text()))


def test_a_policy_config_given_to_make_plan_clears_the_advisory_it_settles(tmp_path, capsys):
    """The default plan's advisory (no 1.34 row in the dated preset table) is cleared by a recorded check."""
    status, unchecked = _json_plan(capsys, "--stack", "prod")
    assert status == plan.EXIT_OK
    assert {f["policy"] for f in unchecked["findings"]} == {UNLISTED_MINOR_POLICY}
    checked = tmp_path / "policy-config.json"
    entry = {"kubernetesVersion": "1.34", "platform": "gpu-h200-sxm", "driversPreset": "cuda13.0"}
    checked.write_text(json.dumps({UNLISTED_MINOR_POLICY: {"checkedPresets": [{**entry, "checkedOn": "2026-12-01"}]}}))
    status, cleared = _json_plan(capsys, "--stack", "prod", "--policy-config", str(checked))
    assert status == plan.EXIT_OK and cleared["findings"] == []
    # make hands its variables to the tool through the environment (never through the shell's parser).
    command = subprocess.run(
        ["make", "-n", "plan", f"POLICY_CONFIG={checked}", "BASE=HEAD^1"],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert '--policy-config="$POLICY_CONFIG"' in command and '--base="$BASE"' in command


def test_against_the_committed_plan_a_template_edit_names_the_group_it_recreates(tmp_path, capsys):
    edited = tmp_path / "Pulumi.prod.yaml"
    text = (PROJECT_DIR / "Pulumi.prod.yaml").read_text()
    assert text.count("bootDiskSizeGib: 1024") >= 1
    edited.write_text(text.replace("bootDiskSizeGib: 1024", "bootDiskSizeGib: 2048", 1))
    status, document = _json_plan(capsys, "--stack-file", str(edited), "--base", "HEAD")
    assert status == plan.EXIT_OK
    [recreated] = document["recreations"]
    assert recreated["name"] == "dra-prod-h200-train"
    assert any("2048" in change for change in recreated["changes"])


def test_a_base_without_the_stack_gives_no_baseline_and_the_plan_says_why(tmp_path, capsys):
    scratch = tmp_path / "Pulumi.try.yaml"
    shutil.copyfile(PROJECT_DIR / "Pulumi.dev.yaml", scratch)
    assert plan.main(["--stack-file", str(scratch), "--base", "HEAD", "--out", "none"]) == plan.EXIT_OK
    assert '"HEAD" has no stack file Pulumi.try.yaml: every node group of it is new' in capsys.readouterr().out


def test_an_unknown_base_revision_is_refused(capsys):
    assert plan.main(["--stack", "dev", "--base", "no-such-revision-anywhere", "--out", "none"]) == plan.EXIT_PROGRAM
    assert '--base "no-such-revision-anywhere" is not a git revision' in capsys.readouterr().err


def test_a_refused_base_that_may_be_a_credential_is_told_by_its_shape(capsys):
    """A revision argument is the user's text: one pasted with a login in it (hostile round five) is not quoted."""
    assert plan.main(["--stack", "dev", "--base", "bob:Hunter2pw@x", "--out", "none"]) == plan.EXIT_PROGRAM
    err = capsys.readouterr().err
    assert '--base "<15 characters: letters, digits, :@; hidden: may be a credential>" is not' in err
    assert "Hunter2pw" not in err


def test_a_baseline_file_and_a_base_revision_together_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as refused:
        plan.main(["--baseline", str(tmp_path / "x.json"), "--base", "HEAD"])
    assert refused.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_a_failed_plan_is_no_baseline():
    """Its empty node group list would otherwise read as "nothing is recreated"."""
    with pytest.raises(BaselineError, match="failed"):
        read_baseline({"stack": "dev", "error": "nebius-dra:parentId: required", "nodeGroups": []}, "dev")


def test_a_base_with_a_link_out_of_its_tree_gives_no_baseline(tmp_path):
    """A committed link to an absolute path ended the plan with a traceback (tarfile.AbsoluteLinkError)."""
    repository = tmp_path / "repository"
    repository.mkdir()
    (repository / "venv").symlink_to("/usr")

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(repository), *args], capture_output=True, text=True, check=True)
        return done.stdout.strip()

    git("init", "-q")
    git("add", "venv")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "link")
    with pytest.raises(NoBaselineError, match="cannot be unpacked safely: 'venv' is a link to an absolute path"):
        base_plan._unpack(git("rev-parse", "HEAD"), tmp_path / "unpacked", repository)


def test_the_base_revision_code_gets_none_of_the_caller_credentials(tmp_path, monkeypatch):
    """--base runs the revision's own code: a branch under review must not read NEBIUS_IAM_TOKEN or a CI token."""
    repository = tmp_path / "repository"
    (repository / "tools" / "plan").mkdir(parents=True)
    (repository / "Pulumi.dev.yaml").write_text("config: {}\n")
    (repository / "tools" / "plan" / "__main__.py").write_text(
        "import json, os\n"
        "print(json.dumps({'nodeGroups': [], 'seen': {k: v for k, v in os.environ.items() if 'H39' in k or 'TOKEN' in k},"
        " 'path': 'PATH' in os.environ}))\n"
    )
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    subprocess.run(["git", "-C", str(repository), "add", "."], check=True)
    subprocess.run(
        ["git", "-C", str(repository), "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "env"],
        check=True,
    )
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", "nebtok-h39")
    monkeypatch.setenv("H39_SECRET", "hunter2")
    printed = json.loads(base_plan.base_plan("dev", "HEAD", repository))
    assert printed["seen"] == {} and printed["path"] is True


def _committed_copy(folder, stack_text: str) -> None:
    """This working tree's files in a new repository at `folder`, committed with `stack_text` as Pulumi.dev.yaml;
    the worktree's Pulumi.dev.yaml is then the good one again."""
    listed = subprocess.run(
        ["git", "-C", str(PROJECT_DIR), "ls-files", "-co", "--exclude-standard", "-z"], capture_output=True, check=True
    )
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = PROJECT_DIR / name
        if source.is_file() and not source.is_symlink():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, folder / name)
    good = (folder / "Pulumi.dev.yaml").read_text()
    (folder / "Pulumi.dev.yaml").write_text(stack_text)
    git = ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "refused base"], check=True)
    (folder / "Pulumi.dev.yaml").write_text(good)


def test_a_base_whose_plan_is_refused_gives_its_reason_and_an_explicit_base_exits_2(tmp_path):
    """The reason was empty (`failed (exit 2): `: a refused config goes to the JSON's error, not to stderr), and an
    explicit --base that could not be planned still exited 0: a CI job's comparison silently made with nothing."""
    good = (PROJECT_DIR / "Pulumi.dev.yaml").read_text()
    refused = good.replace(
        "config:\n", "config:\n  nebius-dra:draDriverRepository: https://u:CANARYPW@h.example.com/x\n", 1
    )
    _committed_copy(tmp_path, refused)

    def plan_in(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "tools.plan", "--stack", "dev", "--out", "none", *args]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)

    reason = "failed (exit 2): invalid stack configuration (1 problem"
    asked = plan_in("--base", "HEAD")
    assert asked.returncode == plan.EXIT_PROGRAM, asked.stderr
    assert f'the plan of dev at "HEAD" {reason}' in asked.stderr, asked.stderr
    assert "nebius-dra:draDriverRepository" in asked.stderr
    assert "the comparison asked for cannot be made" in asked.stderr
    implicit = plan_in()
    assert implicit.returncode == plan.EXIT_OK, implicit.stderr
    assert "Nodes recreated: not known, no baseline" in implicit.stdout and reason in implicit.stdout
    assert "nebius-dra:draDriverRepository" in implicit.stdout
    assert "CANARYPW" not in asked.stderr + implicit.stdout + implicit.stderr


def test_a_failed_base_plan_that_printed_nothing_says_it_gave_no_reason():
    assert base_plan.failure_reason("", "") == base_plan.NO_REASON
    assert base_plan.failure_reason("\n", '{"error": null}') == base_plan.NO_REASON
    said = base_plan.failure_reason("python -m tools.plan: --out: bad\x1b[2J u:PW@h.example.com\nmore\n", "")
    assert said.startswith("--out: bad\\u001b[2J") and "PW" not in said and said.endswith("(and 1 more line(s))")
