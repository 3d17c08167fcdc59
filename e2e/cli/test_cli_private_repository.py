"""dev through the real Pulumi CLI with its charts from a private chart repository (issue 40).

The repository on 127.0.0.1 serves the real charts of the vendor directory only to HTTP basic
authentication of one user (chart_repository.py answers 401 otherwise), as a Harbor or Artifactory
mirror does. The stack names it in its repository settings and logs in with `chartRepositoryUsername`
and the secret `chartRepositoryPassword`, set with `pulumi config set --secret`: a wrong password
fails the preview with the repository's 401 and never prints the password; the right one installs
the release with the real Kubernetes provider; neither password is in any output, the stack file or
the state.

Run from the repository root: venv/bin/python -m pytest -q e2e/cli/test_cli_private_repository.py
"""

from __future__ import annotations

import pytest
from chart_repository import ChartRepository
from cli_checks import POLICY_PACK, RELEASE, check_destroy_removes_everything, check_up_creates_everything
from cli_stack import CliStack
from dra_engines import engine_build
from dra_scenarios import SCENARIOS

from components.config.errors import config_key

STACK = "dev"
# A robot account as Harbor names them, and passwords with the characters basic authentication must carry whole
# (a ':' is part of the password, RFC 7617 section 2).
USERNAME = "robot$dra+ci"
PASSWORD = "PRIVATEpw7Qz:x@y"
WRONG_PASSWORD = "WRONGpw3Kd:x@y"


@pytest.fixture(scope="module")
def private_charts(tmp_path_factory):
    with ChartRepository(
        engine_build.vendor_dir() / "charts", tmp_path_factory.mktemp("private-charts"), (USERNAME, PASSWORD)
    ) as repository:
        yield repository


@pytest.fixture(scope="module")
def stack(new_engine, kube, kubelet, cluster, private_charts, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("cli-private")
    cli = CliStack.prepare(
        SCENARIOS[STACK], workdir, new_engine("private"), kube, cluster.kubeconfig, private_charts.url
    )
    cli.ok("config", "set", config_key("chartRepositoryUsername"), USERNAME)
    yield cli
    cli.close()


def set_password(stack: CliStack, password: str) -> None:
    stack.ok("config", "set", "--secret", config_key("chartRepositoryPassword"), "--", password)


def printed(stack: CliStack) -> str:
    return "\n".join(result.text for _, result in stack.history)


class TestPrivateRepository:
    def test_a_wrong_password_fails_the_preview_with_the_repositorys_401(self, stack, private_charts):
        set_password(stack, WRONG_PASSWORD)
        result = stack.pulumi("preview", *POLICY_PACK)
        assert result.code != 0, f"a preview with a wrong password passed: {result}"
        assert "401" in result.text and private_charts.url in result.text, str(result)
        assert any(path.endswith("index.yaml") for path in private_charts.refused), private_charts.refused
        assert WRONG_PASSWORD not in printed(stack), "a command printed the wrong password"

    def test_the_right_password_installs_every_chart_from_the_private_repository(self, stack, kube, private_charts):
        set_password(stack, PASSWORD)
        refused_before = len(private_charts.refused)
        check_up_creates_everything(stack, kube, private_charts.requests)
        assert len(private_charts.refused) == refused_before, private_charts.refused[refused_before:]
        stack.ok("preview", "--expect-no-changes", *POLICY_PACK)

    def test_the_password_is_in_no_output_nor_the_stack_file_nor_the_state(self, stack):
        stack_file = (stack.project / f"Pulumi.{stack.name}.yaml").read_text()
        assert "secure:" in stack_file and PASSWORD not in stack_file and WRONG_PASSWORD not in stack_file
        exported = stack.ok("stack", "export").out
        assert PASSWORD not in exported, "the repository password is in the state in clear"
        (release,) = [r for r in stack.resources() if r["type"] == RELEASE]
        # additional_secret_outputs: the state holds the release's repository options encrypted (a secret's
        # ciphertext, `pulumi stack export` without --show-secrets).
        assert "ciphertext" in release["outputs"]["repositoryOpts"], release["outputs"].get("repositoryOpts")
        shown = stack.ok("config").out
        assert "chartRepositoryPassword" in shown and "[secret]" in shown, shown
        assert PASSWORD not in printed(stack) and WRONG_PASSWORD not in printed(stack)

    def test_destroy_removes_everything(self, stack, kube):
        check_destroy_removes_everything(stack, kube)
