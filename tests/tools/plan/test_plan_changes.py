"""What a change does against a baseline (tools/plan/changes.py, minor_upgrade.py, what_changed.py): issue 39's edits.

Each edit is made to a real stack's config and planned against that stack's own JSON plan, and the
text plan, the Markdown plan (what the PR comment posts) and the JSON plan are read.
"""

from __future__ import annotations

import copy
import itertools
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config.stack_file import PROJECT_DIR, load_stack_config
from tests.helpers import with_gpu_groups_changed
from tests.queue_configs import TEAMS, prod_with
from tools.plan import __main__ as plan_cli
from tools.plan.minor_upgrade import refusal
from tools.plan.model import build_plan
from tools.plan.report import plan_document, render_markdown, render_text


def _baseline(stack: str) -> dict[str, Any]:
    return json.loads(json.dumps(plan_document(build_plan(stack, out=None))))


@pytest.fixture(scope="module")
def prod_baseline() -> dict[str, Any]:
    return _baseline("prod")


def _with_version(stack: str, version: str) -> dict[str, str]:
    return {**load_stack_config(stack), "nebius-dra:kubernetesVersion": version}


def _changed(markdown: str) -> str:
    return markdown.split("### What changed\n", 1)[1].split("\n### ", 1)[0]


def test_a_minor_upgrade_names_every_group_with_batches_and_duration_after_the_control_plane(prod_baseline):
    plan = build_plan("prod", config=_with_version("prod", "1.35"), out=None, baseline=prod_baseline)
    assert not plan.blocked and plan.minor is not None and plan.minor.refused is None
    text, markdown = render_text(plan), render_markdown(plan)
    for shown in (text, _changed(markdown)):
        assert "CLUSTER MINOR UPGRADE 1.34 -> 1.35 (kubernetesVersion): control plane first" in shown
        control_plane = shown.index("1. control plane dra-prod: 1.34 -> 1.35")
        for group, batches in (("system", "3 batch(es)"), ("h200-burst", "8 batch(es)"), ("h200-train", "4 batch(es)")):
            line = next(line for line in shown.splitlines() if line.strip().startswith(f"{group}: "))
            assert batches in line and "at most" in line, line
            assert shown.index(line) > control_plane
        assert "about 6h10m at most" in shown
        # What breaks: capacity during each group's roll-out, and the surge node beside the system group.
        assert "runs on 3 of 4 nodes for about 3h00m; a job spanning every node is evicted once per batch" in shown
        assert "runs on 3 of 3 nodes for about 45m, with 1 surge node(s) added beside them and billed" in shown
    assert "recreates the nodes of 3 node group(s)" in text.splitlines()[0]
    document = plan_document(plan)
    assert {r["name"] for r in document["recreations"]} == {
        "dra-prod-system",
        "dra-prod-h200-train",
        "dra-prod-h200-burst",
    }
    assert document["minorUpgrade"]["refused"] is None


def test_a_skipped_minor_is_refused_with_the_allowed_path(capsys, tmp_path):
    baseline = tmp_path / "dev.json"
    baseline.write_text(json.dumps(_baseline("dev")))
    edited = tmp_path / "Pulumi.dev.yaml"
    edited.write_text((PROJECT_DIR / "Pulumi.dev.yaml").read_text().replace('"1.34"', '"1.36"'))
    out = tmp_path / "plan"
    for form in ("text", "markdown"):
        status = plan_cli.main(
            ["--stack-file", str(edited), "--baseline", str(baseline), "--out", str(out), "--format", form]
        )
        captured = capsys.readouterr()
        assert status == plan_cli.EXIT_PROGRAM, "a minor skip is bad input: exit 2, as the driver line's refusal"
        assert captured.err.startswith("python -m tools.plan: nebius-dra:kubernetesVersion: 1.34 -> 1.36 skips a minor")
        assert "Allowed path: 1.34 -> 1.35 -> 1.36" in captured.err
        # Newcomer a39: as every other exit-2 refusal, it prints only the refusal and writes no file.
        assert captured.out == "" and captured.err.count("\n") == 1, captured
        assert not out.exists(), sorted(out.rglob("*"))
    # Newcomer 4: the README and offline-plan.md quote this line's start, not a summary or a `REFUSED:` line.
    quoted = captured.err.split(" skips a minor:", 1)[0] + " skips a minor: ..."
    for page in ("README.md", "docs/offline-plan.md"):
        text = " ".join((PROJECT_DIR / page).read_text().split())
        assert f"`{quoted}`" in text, page
        assert "REFUSED: kubernetesVersion" not in text and "`BLOCKED: ... is refused`" not in text, page


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [((1, 34), (1, 35), None), ((1, 35), (1, 34), "no downgrade"), ((1, 34), (1, 37), "1.34 -> 1.35 -> 1.36 -> 1.37")],
)
def test_the_skew_policy_allows_one_minor_up(before, after, expected):
    found = refusal(before, after)
    assert found is None if expected is None else expected in (found or "")


def test_a_label_edit_reaches_only_new_nodes_and_says_how_many_keep_the_old(prod_baseline):
    config = with_gpu_groups_changed(
        "prod", lambda g: {"labels": {**g.get("labels", {}), "team": "a"}} if g["name"] == "h200-train" else {}
    )
    plan = build_plan("prod", config=config, out=None, baseline=prod_baseline)
    text = render_text(plan)
    assert "REACHES ONLY NEW NODES (Nebius starts no roll-out)" in text
    assert "h200-train: its existing 4 node(s) keep the old values until replaced" in text
    assert "template.metadata.labels.team: (unset) -> a" in text
    assert "RECREATES NODES" not in text
    # a39 5a: with the count raised in the same change, the existing nodes are the baseline's 4, not the 5 planned.
    raised = with_gpu_groups_changed(
        "prod",
        lambda g: (
            {"labels": {**g.get("labels", {}), "team": "a"}, "fixedNodeCount": 5} if g["name"] == "h200-train" else {}
        ),
    )
    text = render_text(build_plan("prod", config=raised, out=None, baseline=prod_baseline))
    assert "h200-train: its existing 4 node(s) keep the old values until replaced" in text
    assert "fixedNodeCount: 4 -> 5" in text


def _block(shown: str, title: str) -> str:
    """One section of What changed: the lines under its title, indented deeper than it (text indents the body)."""
    [head] = [line for line in shown.splitlines() if line.lstrip().startswith(title)]
    under = " " * (len(head) - len(head.lstrip()) + 1)
    lines = shown.split(head, 1)[1].splitlines()[1:]
    return "\n".join(itertools.takewhile(lambda line: line.startswith(under), lines))


def test_every_node_group_and_chart_source_section_names_its_rows_source(prod_baseline):
    """a39 5a, 5b, 8a: the node-group sections and the chart-source change cited no source, though the table has one."""
    raised = with_gpu_groups_changed(
        "prod",
        lambda g: (
            {"labels": {**g.get("labels", {}), "team": "a"}, "fixedNodeCount": 5} if g["name"] == "h200-train" else {}
        ),
    )
    platform = with_gpu_groups_changed(
        "prod", lambda g: {"platform": "gpu-h100-sxm"} if g["name"] == "h200-burst" else {}
    )
    mirror = {**load_stack_config("prod"), "nebius-dra:draDriverRepository": "https://charts.example.com/nvidia"}
    expected = [
        (raised, "REACHES ONLY NEW NODES", "source: pulumi-nebius 0.6.73 (the installed SDK's docstrings"),
        (raised, "REACHES ONLY NEW NODES", '"Field change will NOT trigger NodeGroup roll out"'),
        (raised, "IN PLACE (no node replaced)", 'fixed_node_count: "Can be changed manually at any time"'),
        (platform, "RECREATES NODES", 'Mk8sV1NodeGroupArgs.template: "If not written opposite a NodeTemplate field'),
        (
            mirror,
            "HELM CHART SOURCE CHANGED",
            "source: Helm upgrade semantics (https://helm.sh/docs/helm/helm_upgrade/)",
        ),
    ]
    for config, title, source in expected:
        plan = build_plan("prod", config=config, out=None, baseline=prod_baseline)
        for shown in (render_text(plan), _changed(render_markdown(plan))):
            assert source in _block(shown, title), (title, _block(shown, title))


def test_a_baseline_from_before_plan_format_2_is_read_and_says_what_it_cannot_know(prod_baseline):
    legacy = copy.deepcopy(prod_baseline)
    for key in ("planFormat", "cluster", "releases", "claimTemplates", "driverRoot"):
        legacy.pop(key)
    for group in legacy["nodeGroups"]:
        group["template"] = {k: v for k, v in group["template"].items() if k not in ("metadata", "taints")}
        for key in ("version", "fixedNodeCount", "autoscaling", "strategy", "autoRepair"):
            group.pop(key, None)
    plan = build_plan("prod", config=_with_version("prod", "1.35"), out=None, baseline=legacy)
    text = render_text(plan)
    assert "Not known: the baseline was written before planFormat 2 and does not record node group versions" in text
    assert plan.minor is None


@pytest.mark.parametrize("plan_format", [3, 1, "2", None, True, 2.0])
def test_a_baseline_of_an_unknown_plan_format_is_refused_naming_the_file(plan_format, prod_baseline, tmp_path, capsys):
    # Read as a legacy plan it gave false verdicts (attack 37, F9): a version 1.34 -> (unset) that recreates nodes.
    path = tmp_path / "base.json"
    path.write_text(json.dumps({**prod_baseline, "planFormat": plan_format}))
    status = plan_cli.main(["--stack", "prod", "--baseline", str(path), "--out", "none"])
    assert status == plan_cli.EXIT_PROGRAM
    err = capsys.readouterr().err
    assert (
        f"{json.dumps(str(path))}: the baseline's planFormat is {json.dumps(plan_format)}; this tools.plan reads planFormat 2"
        in err
    )


def _checkout(folder: Path, commit: bool) -> None:
    """This working tree's files (tracked, and untracked but not ignored: the code under test) in `folder`."""
    listed = subprocess.run(
        ["git", "-C", str(PROJECT_DIR), "ls-files", "-co", "--exclude-standard", "-z"],
        capture_output=True,
        check=True,
    )
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = PROJECT_DIR / name
        if source.is_file() and not source.is_symlink():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, folder / name)
    if commit:
        git = ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", "base"], check=True)


def _plan_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tools.plan", "--stack", "prod", "--out", "none", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_plain_edit_in_a_checkout_is_compared_with_the_last_commit_without_a_flag(tmp_path):
    _checkout(tmp_path, commit=True)
    stack = tmp_path / "Pulumi.prod.yaml"
    stack.write_text(stack.read_text().replace("bootDiskSizeGib: 1024", "bootDiskSizeGib: 2048", 1))
    done = _plan_in(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Compared with the plan of the last commit" in done.stdout
    assert "RECREATES NODES of 1 node group(s)" in done.stdout
    assert "template.bootDisk.sizeGibibytes: 1024 -> 2048" in done.stdout
    off = _plan_in(tmp_path, "--no-base")
    assert "Nodes recreated: not known without a baseline" in off.stdout


def test_outside_a_git_checkout_the_plan_says_why_there_is_no_comparison(tmp_path):
    _checkout(tmp_path, commit=False)
    done = _plan_in(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "is not a git checkout, so there is no last commit to compare with" in done.stdout
    subprocess.run(["git", "-C", str(tmp_path), "init", "-q"], check=True)
    assert "the checkout has no commit yet" in _plan_in(tmp_path).stdout


def prod_with_an_operator_group(driver_root: str) -> dict[str, str]:
    """Issue 39's second edit: prod's preset groups opted out of the Operator's driver, an H100 group without a
    driversPreset beside them, and draDriverRoot at `driver_root` (the two fixes the tool suggests)."""
    config = with_gpu_groups_changed(
        "prod", lambda g: {"labels": {**g["labels"], "nvidia.com/gpu.deploy.operands": "false"}}
    )
    groups = json.loads(config["nebius-dra:gpuNodeGroups"])
    groups.append(
        {
            "name": "h100-op",
            "platform": "gpu-h100-sxm",
            "preset": "8gpu-128vcpu-1600gb",
            "fixedNodeCount": 1,
            "strategy": {"maxSurge": 0, "maxUnavailable": 1, "drainTimeout": "30m"},
        }
    )
    return config | {"nebius-dra:gpuNodeGroups": json.dumps(groups), "nebius-dra:draDriverRoot": driver_root}


def test_an_operator_group_beside_preset_groups_is_planned_as_steps_and_the_root_move_is_mandatory(prod_baseline):
    """Issue 39's second edit: the opt-out label and draDriverRoot the config asks for, and what they still break."""
    config = prod_with_an_operator_group("/run/nvidia/driver")
    plan = build_plan("prod", config=config, out=None, baseline=prod_baseline)
    assert plan.blocked
    [finding] = [f for f in plan.findings if f.policy == "driver-mode-transition"]
    assert finding.mandatory and "h200-burst, h200-train, whose driver lives at /" in finding.message
    for shown in (render_text(plan), _changed(render_markdown(plan))):
        assert "kubectl label nodes -l nebius-dra/node-group=h200-train nvidia.com/gpu.deploy.operands=false" in shown
        assert "values.nvidiaDriverRoot: / -> /run/nvidia/driver" in shown
        assert "restarts the plugin on every GPU node at once" in shown, "the Helm row's words, not a fixed line"
    assert "driver-mode-transition" in render_markdown(plan)
    accepted = build_plan(
        "prod",
        config={**config, "nebius-dra:draPluginOutageAccepted": '["h200-train", "h200-burst"]'},
        out=None,
        baseline=prod_baseline,
    )
    assert not [f for f in accepted.findings if f.policy == "driver-mode-transition"]
    assert "h200-burst, h200-train lose their DRA plugin at `pulumi up` (accepted by draPluginOutageAccepted)" in (
        render_text(accepted)
    )
    partly = build_plan(
        "prod",
        config={**config, "nebius-dra:draPluginOutageAccepted": '["h200-train"]'},
        out=None,
        baseline=prod_baseline,
    )
    [left] = [f for f in partly.findings if f.policy == "driver-mode-transition"]
    assert left.message.endswith("accept it with nebius-dra:draPluginOutageAccepted: [h200-burst]")


def test_an_operator_group_left_at_the_preset_root_is_a_mandatory_finding_and_a_step(prod_baseline):
    """The other fix the tool suggests, draDriverRoot: /, leaves the new Operator group's GPUs unclaimable."""
    config = prod_with_an_operator_group("/")
    plan = build_plan("prod", config=config, out=None, baseline=prod_baseline)
    assert plan.blocked
    [finding] = [f for f in plan.findings if f.policy == "dra-driver-root-serves-every-group"]
    assert finding.mandatory and "(group h100-op) has its GPU driver under /run/nvidia/driver" in finding.message
    step = (
        "new group h100-op has its driver under /run/nvidia/driver, not at draDriverRoot /: its DRA plugin cannot work"
    )
    for shown in (render_text(plan), _changed(render_markdown(plan))):
        assert step in shown
    accepted = build_plan(
        "prod",
        config={**config, "nebius-dra:draPluginOutageAccepted": '["h100-op"]'},
        out=None,
        baseline=prod_baseline,
    )
    assert not accepted.blocked
    assert "never claimed (policy dra-driver-root-serves-every-group, accepted by draPluginOutageAccepted)" in (
        render_text(accepted)
    )


def test_an_outage_accepted_for_a_group_with_no_driver_mode_change_is_an_advisory(prod_baseline):
    # A standing acceptance with nothing to accept would let a later transition through silently (attack 37, F8).
    config = {**load_stack_config("prod"), "nebius-dra:draPluginOutageAccepted": '["h200-train"]'}
    plan = build_plan("prod", config=config, out=None, baseline=prod_baseline)
    [finding] = [f for f in plan.findings if f.policy == "outage-accepted-only-where-stranded"]
    assert not finding.mandatory and not plan.blocked
    assert finding.message.startswith("nebius-dra:draPluginOutageAccepted names h200-train, but ")
    assert "there is no plugin outage to accept" in finding.message
    unaccepted = build_plan("prod", config=load_stack_config("prod"), out=None, baseline=prod_baseline)
    assert not [f for f in unaccepted.findings if f.policy == "outage-accepted-only-where-stranded"]


def test_the_plan_shows_a_doubtful_price_and_a_spot_ceiling_with_its_advisory(prod_baseline):
    config = with_gpu_groups_changed(
        "prod",
        lambda g: {"capacity": {"type": "spot", "maxPricePerGpuHour": "0.50"}} if g["name"] == "h200-burst" else {},
    )
    plan = build_plan("prod", config=config, out=None, baseline=prod_baseline)
    for shown in (render_text(plan), render_markdown(plan)):
        assert "h200-burst's ceiling $0.5 per GPU-hour is below the table's spot price $1.45" in shown
        assert "doubtful price (prices/nebius.yaml): likely low" in shown
    assert "RECREATES NODES of 1 node group(s)" in render_text(plan)
    [advisory] = [f for f in plan.findings if f.policy == "spot-ceiling-below-spot-price"]
    assert not advisory.mandatory and "below the price table's spot price $1.45 per GPU-hour" in advisory.message
    assert "advisory finding(s)" in render_text(plan).splitlines()[0]
    for changed in (render_text(plan).split("Policy verdicts", 1)[0], _changed(render_markdown(plan))):
        assert "SPOT CEILING BELOW THE SPOT PRICE: h200-burst: 8 GPUs x $0.5 per GPU-hour at most" in changed


def _without_burst(stack_config: dict[str, str]) -> dict[str, str]:
    groups = [g for g in json.loads(stack_config["nebius-dra:gpuNodeGroups"]) if g["name"] != "h200-burst"]
    return {**stack_config, "nebius-dra:gpuNodeGroups": json.dumps(groups)}


def test_deleting_a_protected_group_is_a_failing_up_that_saves_nothing(prod_baseline):
    """prod deploys with protect: true; Pulumi refuses to delete a protected resource."""
    plan = build_plan("prod", config=_without_burst(load_stack_config("prod")), out=None, baseline=prod_baseline)
    text = render_text(plan)
    summary = text.splitlines()[0]
    assert "`pulumi up` FAILS: it cannot delete the protected node group(s) h200-burst" in summary
    assert "recreates" not in summary
    # A failing `pulumi up` is no go-ahead: exit 1 and ok false, as for a blocked plan (docs/offline-plan.md).
    assert plan_cli.exit_status(plan) == 1 and plan_document(plan)["ok"] is False
    for shown in (text, _changed(render_markdown(plan))):
        assert "`pulumi up` FAILS deleting node group h200-burst: it is protected" in shown
        assert "https://www.pulumi.com/docs/iac/concepts/options/protect/" in shown
        assert "docs/operating.md#tearing-down" in shown
        assert "DELETES node group h200-burst" not in shown
    assert "h200-burst is left out of this estimate, but it is protected" in render_markdown(plan)
    unprotected = {**load_stack_config("prod"), "nebius-dra:protect": "false"}
    baseline = _baseline_of(unprotected)
    plain = build_plan("prod", config=_without_burst(unprotected), out=None, baseline=baseline)
    plain_text = render_text(plain)
    assert "; deletes 1 node group(s)" in plain_text.splitlines()[0]
    assert "recreates" not in plain_text.splitlines()[0]
    assert "DELETES node group h200-burst" in plain_text and "FAILS" not in plain_text
    assert plan_cli.exit_status(plain) == 0


def test_an_unprotected_group_renamed_is_created_first_then_deleted_with_the_sample_pod_on_it():
    """a39 5d: dev's h200 renamed h200a: the deletion named neither the order, the sample Pod it kills, nor a source."""
    plan = build_plan("dev", config=with_gpu_groups_changed("dev", lambda g: {"name": "h200a"}), out=None,
                      baseline=_baseline("dev"))  # fmt: skip
    for shown in (render_text(plan), _changed(render_markdown(plan))):
        deleted = shown.split("DELETES node group h200: ", 1)[1].split("New node group(s) h200a", 1)[0]
        order = "Pulumi creates what the change adds (a renamed group's new one) first and deletes the old group"
        assert f"{order} at the end of the update, with all its nodes, their boot disks and running pods" in deleted
        assert "sample Pod(s) gpu-workload (samplePods), when on its nodes: evicted when a roll-out" in deleted
        assert "or stopped when its group is deleted" in deleted and "not started again on another node" in deleted
        assert "the next `pulumi up --refresh`" in deleted and "Pods do not, by themselves, self-heal" in deleted
        assert "https://www.pulumi.com/docs/iac/concepts/resources/names/" in deleted
        assert "the engine will make a delete request to the resource provider" in deleted


def _baseline_of(config: dict[str, str]) -> dict[str, Any]:
    return json.loads(json.dumps(plan_document(build_plan("prod", config=config, out=None))))


def test_a_total_resting_on_a_doubtful_price_says_so_in_the_cost_table_and_the_resources_tree():
    plan = build_plan("prod", out=None)
    text = render_text(plan)
    caveat = "rests on doubtful or stale prices of h200-train, h200-burst (see notes)"
    [total] = [line for line in text.splitlines() if line.strip().startswith("total")]
    assert total.endswith(caveat)
    assert f"priceCaveat={caveat}" in text.split("\nResources\n", 1)[1]
    assert caveat in render_markdown(plan)


def _with_templates(config: dict[str, str], builtins: list[str], user: list[dict[str, Any]]) -> dict[str, str]:
    users = [*json.loads(config["nebius-dra:userClaimTemplates"]), *user]
    return config | {
        "nebius-dra:builtinClaimTemplates": json.dumps(builtins),
        "nebius-dra:userClaimTemplates": json.dumps(users),
    }


ONE_GPU = {"name": "one-h200", "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}


def test_claim_templates_created_and_deleted_are_named_with_what_they_do(prod_baseline):
    """A built-in template dropped from builtinClaimTemplates and a user template added: each with its row's words."""
    builtins = ["gpu", "multi-gpu", "gpu-by-product", "rdma-network", "gpu-nic-aligned"]
    config = _with_templates(load_stack_config("prod"), builtins, [ONE_GPU])
    plan = build_plan("prod", config=config, out=None, baseline=prod_baseline)
    for shown in (render_text(plan), _changed(render_markdown(plan))):
        assert "CLAIM TEMPLATE dra-samples/one-h200 (userClaimTemplates) created: Pods may name it" in shown
        assert "CLAIM TEMPLATE dra-samples/ib-network (built-in, builtinClaimTemplates) DELETED: running Pods keep" in (
            shown
        )
        assert "a Pod created afterwards that names it gets no claim and does not start" in shown
        assert "resource-claim-template-v1/" in shown and "will be bound to this pod" in shown
        assert "Nothing recorded differs" not in shown
    changes = plan_document(plan)["changes"]
    assert changes["addedClaimTemplates"] == ["dra-samples/one-h200 (userClaimTemplates)"]
    assert changes["removedClaimTemplates"] == ["dra-samples/ib-network (built-in, builtinClaimTemplates)"]


def test_a_built_in_template_the_stack_stops_creating_says_why():
    """dev moved from an 8-GPU node to a 1-GPU one: no group has two GPUs a node, so multi-gpu is no longer created."""
    eight = with_gpu_groups_changed("dev", lambda g: {"preset": "8gpu-128vcpu-1600gb"})
    baseline = json.loads(json.dumps(plan_document(build_plan("dev", config=eight, out=None))))
    text = render_text(build_plan("dev", out=None, baseline=baseline))
    assert (
        "CLAIM TEMPLATE dra-samples/multi-gpu (built-in, builtinClaimTemplates) (not created now: no GPU group has two "
        "or more GPUs per node) DELETED" in text
    )


def test_a_claim_template_edit_is_a_replacement_with_its_source(prod_baseline):
    users = json.loads(load_stack_config("prod")["nebius-dra:userClaimTemplates"])
    users[0]["requests"][1]["exactly"]["allocationMode"] = "ExactCount"
    config = {**load_stack_config("prod"), "nebius-dra:userClaimTemplates": json.dumps(users)}
    plan = build_plan("prod", config=config, out=None, baseline=prod_baseline)
    for shown in (render_text(plan), _changed(render_markdown(plan))):
        assert "CLAIM TEMPLATES DELETED AND CREATED (the spec is immutable" in shown
        assert "ValidateResourceClaimTemplateUpdate" in shown and "This field is immutable" in shown
        assert "CLAIM TEMPLATE dra-samples" not in shown, "an edited template is neither created nor deleted"


def test_a_baseline_that_did_not_record_template_namespaces_says_a_move_is_not_known(prod_baseline):
    """planFormat 2 before issue 39 recorded a claim template's name and spec only: its namespace is neither a change
    nor silence (a38 F17: a move of it, which deletes every template, vanished)."""
    older = copy.deepcopy(prod_baseline)
    for template in older["claimTemplates"]:
        del template["namespace"]
    config = {**load_stack_config("prod"), "nebius-dra:claimNamespace": "gpu-claims"}
    for stack_config in (None, config):
        text = render_text(build_plan("prod", config=stack_config, out=None, baseline=older))
        assert "Nothing recorded differs" not in text and "namespace: " not in text
        assert "Not known: the baseline does not record namespace of claim template(s) gpu, " in text
        assert (
            "a change of it would be resource deleted and created (the template is created in the new namespace" in text
        )
    moved = build_plan(
        "prod",
        config={**load_stack_config("prod"), "nebius-dra:claimNamespace": "gpu-claims"},
        out=None,
        baseline=prod_baseline,
    )
    assert "namespace: dra-samples -> gpu-claims" in render_text(moved)
    assert "NOT IN THE TABLE" not in render_text(moved)


def test_a_new_subnet_replaces_the_cluster_and_a_new_etcd_size_is_in_place(prod_baseline):
    moved = {**load_stack_config("prod"), "nebius-dra:subnetId": "vpcsubnet-e00prod00000000001"}
    plan = build_plan("prod", config=moved, out=None, baseline=prod_baseline)
    text = render_text(plan)
    assert "REPLACES THE CLUSTER, and every node group with it" in text.splitlines()[0]
    for shown in (text, _changed(render_markdown(plan))):
        assert "REPLACES THE CLUSTER dra-prod" in shown
        assert "controlPlane.subnetId: vpcsubnet-e00prod00000000000 -> vpcsubnet-e00prod00000000001" in shown
        assert "(field_behavior) = IMMUTABLE" in shown
    resized = build_plan(
        "prod",
        config={**load_stack_config("prod"), "nebius-dra:etcdClusterSize": "1"},
        out=None,
        baseline=prod_baseline,
    )
    changed = render_text(resized).split("Policy verdicts", 1)[0]
    assert "IN PLACE (no node replaced)" in changed and "controlPlane.etcdClusterSize: 3 -> 1" in changed
    assert "REPLACES" not in changed


def test_a_baseline_that_recorded_the_cluster_version_only_shows_no_other_cluster_change(prod_baseline):
    older = copy.deepcopy(prod_baseline)
    older["cluster"] = {k: v for k, v in older["cluster"].items() if k in ("urn", "name")} | {
        "controlPlane": {"version": "1.34"}
    }
    text = render_text(build_plan("prod", out=None, baseline=older))
    assert "REPLACES" not in text and "Nothing recorded differs" not in text
    assert "Not known: the baseline does not record parentId of the cluster dra-prod" in text
    assert "Not known: the baseline does not record controlPlane.subnetId of the cluster dra-prod" in text


def test_a_baseline_without_the_cluster_parent_compares_the_rest_like_for_like(prod_baseline):
    """a39 F18: a current baseline with only cluster.parentId removed printed a false REPLACES THE CLUSTER (its
    subnet, etcd size and endpoint "-> (unset)"): only the parentId is not known."""
    older = copy.deepcopy(prod_baseline)
    del older["cluster"]["parentId"]
    text = render_text(build_plan("prod", out=None, baseline=older))
    assert "REPLACES" not in text and "(unset)" not in text
    assert "Not known: the baseline does not record parentId of the cluster dra-prod" in text
    assert "controlPlane.subnetId of" not in text
    resized = {**load_stack_config("prod"), "nebius-dra:etcdClusterSize": "1"}
    assert "controlPlane.etcdClusterSize: 3 -> 1" in render_text(
        build_plan("prod", config=resized, out=None, baseline=older)
    )


def test_a_budget_that_passes_on_a_doubtful_price_says_so_in_the_plan():
    """Issue 39's fourth edit: prod's 30-day budget rests on the H200 price the table calls likely low."""
    budget = {"max-hourly-cost": {"maxHourlyUsd": 400, "enforcementLevel": "mandatory"}}
    plan = build_plan("prod", out=None, policy_config=budget)
    assert not plan.blocked
    for shown in (render_text(plan), render_markdown(plan)):
        verdicts = shown.split("olicy verdicts", 1)[1].split("Cost", 1)[0]
        assert "max-hourly-cost" in verdicts and "within maxHourlyUsd $400.00" in verdicts
        assert "The pass rests on doubtful or stale prices: h200-burst: doubtful price" in verdicts
    assert plan_document(plan)["passes"][0]["policy"] == "max-hourly-cost"


def test_a_release_moved_to_another_namespace_is_deleted_and_created_naming_the_plugin_outage(prod_baseline):
    """attack2 #1: Helm 3 scopes a release to its namespace, so a move uninstalls it and installs it anew; a39 7c:
    uninstalled first (the program sets deleteBeforeReplace: created first, Helm's ownership check fails the install),
    and the summary, the line and docs/offline-plan.md say the same order."""
    pulumi_docs = "https://www.pulumi.com/docs/iac/concepts/options/deletebeforereplace/"
    for key, moved_to in (("draDriverNamespace", "dra2"), ("gpuMetricsNamespace", "gm2")):
        config = {**load_stack_config("prod"), f"nebius-dra:{key}": moved_to}
        plan = build_plan("prod", config=config, out=None, baseline=prod_baseline)
        for shown in (render_text(plan), _changed(render_markdown(plan))):
            assert "HELM RELEASES DELETED AND CREATED" in shown and f"-> {moved_to}" in shown
            assert "uninstalled from the old namespace first, then installed in the new one" in shown
            assert "installed in the new namespace and uninstalled" not in shown
            assert "for a time not known here" in shown and "running pods keep their devices" in shown
            assert "its kubelet plugin is stopped on every GPU node, so no new claim is prepared" in shown
            assert "release-names-are-now-scoped-to-the-namespace" in shown and pulumi_docs in shown
            assert "helm v3.20.2 pkg/action/validate.go existingResourceConflict" in shown
            assert "Nothing recorded differs" not in shown
        summary = render_text(plan).splitlines()[0]
        assert "; uninstalls Helm release(s) dra-prod-" in summary
        assert f", then installs them in their new namespace (deleteBeforeReplace: {pulumi_docs})" in summary
    docs = (PROJECT_DIR / "docs" / "offline-plan.md").read_text()
    assert "uninstalled from the old namespace first, then installed in the new one" in " ".join(docs.split())
    assert pulumi_docs in docs and "existingResourceConflict" in docs
    older = copy.deepcopy(prod_baseline)
    for release in older["releases"]:
        del release["namespace"], release["repositoryOpts"]
    moved = {**load_stack_config("prod"), "nebius-dra:draDriverNamespace": "dra2"}
    for stack_config in (None, moved):
        text = render_text(build_plan("prod", config=stack_config, out=None, baseline=older))
        assert "Nothing recorded differs" not in text and "HELM RELEASES DELETED" not in text
        assert "Not known: the baseline does not record namespace of Helm release(s) dra-prod-" in text
        assert "its kubelet plugin is stopped on every GPU node, so no new claim is prepared" in text


def test_a_deleted_pod_or_namespace_is_named_with_what_it_takes_along():
    """attack2 #2: samplePods off deletes the sample Pod; a claimNamespace move deletes the old namespace and all in
    it, the Pod included. The table's presence rows say what each does, with their sources."""
    baseline = json.loads(json.dumps(plan_document(build_plan("dev", out=None))))
    without_pods = {**load_stack_config("dev"), "nebius-dra:samplePods": "false"}
    off = build_plan("dev", config=without_pods, baseline=baseline, out=None)
    for shown in (render_text(off), _changed(render_markdown(off))):
        assert "Pod dra-samples/gpu-workload DELETED: the sample Pods stop" in shown
        assert "Nothing recorded differs" not in shown
    moved_config = {**load_stack_config("dev"), "nebius-dra:claimNamespace": "claims2"}
    text = render_text(build_plan("dev", config=moved_config, baseline=baseline, out=None))
    assert "Namespace dra-samples -> Namespace claims2: deleted and created" in text
    assert (
        "the old one DELETED with everything in it" in text and "This deletes everything under the namespace!" in text
    )
    assert "Pod dra-samples/gpu-workload -> Pod claims2/gpu-workload: deleted and created" in text
    assert "; deletes namespace(s) dra-samples with all in them" in text.splitlines()[0]
    older = copy.deepcopy(baseline)
    del older["objects"]
    unknown = render_text(build_plan("dev", config=without_pods, baseline=older, out=None))
    assert "Not known: the baseline does not record the Kubernetes objects" in unknown and "DELETED" not in unknown


def test_removing_a_queue_team_names_its_namespace_and_queues_deleted():
    """attack2 #3: a team's namespace goes with everything in it, its ClusterQueue with the team."""
    baseline = json.loads(json.dumps(plan_document(build_plan("prod", config=prod_with({"teams": TEAMS}), out=None))))
    plan = build_plan("prod", config=prod_with({"teams": TEAMS[:1]}), out=None, baseline=baseline)
    for shown in (render_text(plan), _changed(render_markdown(plan))):
        assert "Namespace inference DELETED with everything in it: its Pods stop, its Jobs, LocalQueues" in shown
        # a39 6a: what goes with the namespace is named on its line, not on rows of its own saying "keep running".
        [line] = [line for line in shown.splitlines() if "Namespace inference DELETED" in line]
        assert line.endswith(
            "; going with it: ClusterQueue inference, LocalQueue inference/inference, claim template inference/gpu "
            "(a team's template, queues), claim template inference/multi-gpu (a team's template, queues)"
        ), line
        assert "keep running" not in shown and "running Pods keep" not in shown
        assert "ClusterQueue inference DELETED" not in shown and "CLAIM TEMPLATE inference/" not in shown
        assert "clusterqueue_controller.go" in shown


def _crafted(baseline: dict[str, Any], edit: Any) -> dict[str, Any]:
    crafted = copy.deepcopy(baseline)
    edit(crafted)
    return crafted


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda b: b.pop("cluster"), "has no cluster"),
        (lambda b: b.pop("releases"), "has no releases"),
        (lambda b: b["nodeGroups"].extend(copy.deepcopy(b["nodeGroups"])), "is listed twice"),
        (
            lambda b: [
                g.update(urn=g["urn"].replace("urn:pulumi:prod::", "urn:pulumi:dev::")) for g in b["nodeGroups"]
            ],
            'nodeGroups[0].urn is "<',
        ),
        (lambda b: b["nodeGroups"][1].update(fixedNodeCount=1e308), "nodeGroups[1].fixedNodeCount is 1e+308"),
        (lambda b: b["nodeGroups"][0].update(autoscaling={"minNodeCount": -1}), "autoscaling.minNodeCount is -1"),
        (lambda b: b["cluster"]["controlPlane"].update(version=1.34), "cluster.controlPlane.version is 1.34"),
        (lambda b: b["releases"][0].update(values=[]), "releases[0].values is []"),
    ],
)
def test_a_crafted_or_incomplete_format_2_baseline_is_refused_naming_the_file_and_field(
    edit, named, prod_baseline, tmp_path, capsys
):
    """attack2 #7, #10: a missing record would read as no change, a duplicate or foreign record hides one."""
    path = tmp_path / "crafted.json"
    path.write_text(json.dumps(_crafted(prod_baseline, edit)))
    assert plan_cli.main(["--stack", "prod", "--out", "none", "--baseline", str(path)]) == 2
    stderr = capsys.readouterr().err
    assert str(path) in stderr and named in stderr, stderr


@pytest.mark.parametrize("mirror", ["https://charts.example.com/nvidia", "oci://registry.example.com/charts"])
def test_the_same_chart_version_from_a_mirror_is_a_chart_source_change_not_an_upgrade(mirror):
    """A newcomer's finding: a mirror of the same version was planned as an upgrade with CRDs to apply by hand."""
    baseline = _baseline("dev")
    config = {**load_stack_config("dev"), "nebius-dra:draDriverRepository": mirror}
    plan = build_plan("dev", config=config, out=None, baseline=baseline)
    for shown in (render_text(plan), _changed(render_markdown(plan))):
        changed = shown.split("Policy verdicts", 1)[0]
        assert "HELM UPGRADES" not in changed and "CRDs" not in changed and "Nothing recorded differs" not in changed
        assert "HELM CHART SOURCE CHANGED" in changed
        assert "not a chart upgrade: the release's chart source changes" in changed
        assert "no pod restarts and no CRD changes" in changed
        assert f"repositoryOpts.repo: https://helm.ngc.nvidia.com/nvidia -> {mirror}" in changed
        assert "chart:" not in changed and "NOT IN THE TABLE" not in changed


def test_a_baseline_that_did_not_record_the_repository_shows_no_source_change():
    older = _baseline("dev")
    for release in older["releases"]:
        del release["repositoryOpts"]
    config = {**load_stack_config("dev"), "nebius-dra:draDriverRepository": "https://charts.example.com/nvidia"}
    text = render_text(build_plan("dev", config=config, out=None, baseline=older))
    assert "HELM CHART SOURCE CHANGED" not in text and "Nothing recorded differs" not in text
    assert "Not known: the baseline does not record repositoryOpts of Helm release(s) dra-dev-" in text


def test_a_group_recreated_with_a_new_size_is_listed_once_with_its_outage_and_evicted_samples():
    """The README's first edit: dev's one-node group gets two 8-GPU nodes."""
    baseline = _baseline("dev")
    config = with_gpu_groups_changed("dev", lambda g: {"preset": "8gpu-128vcpu-1600gb", "fixedNodeCount": 2})
    plan = build_plan("dev", config=config, out=None, baseline=baseline)
    for shown in (render_text(plan), _changed(render_markdown(plan))):
        changed = shown.split("Policy verdicts", 1)[0]
        assert "IN PLACE" not in changed, "a recreated group's other changes are listed under it, once"
        recreated = changed.split("RECREATES NODES", 1)[1].split("CLAIM TEMPLATE", 1)[0]
        assert "fixedNodeCount: 1 -> 2 (in place)" in recreated
        assert "in 2 batch(es) of at most 1 node(s)" in recreated and "batch(es) at" not in recreated
        assert "while it has 1 node(s), with maxSurge 0 and maxUnavailable 1, it has no GPU node" in recreated
        assert "sample Pod(s) gpu-workload (samplePods), when on its nodes: evicted" in recreated
        assert "not started again on another node" in recreated and "Pods do not, by themselves, self-heal" in recreated
        assert "CLAIM TEMPLATE dra-samples/multi-gpu (built-in, builtinClaimTemplates) created" in changed


def test_a_minor_upgrade_of_dev_says_the_sample_pod_is_evicted():
    baseline = _baseline("dev")
    plan = build_plan("dev", config=_with_version("dev", "1.35"), out=None, baseline=baseline)
    minor = render_text(plan).split("CLUSTER MINOR UPGRADE", 1)[1].split("Policy verdicts", 1)[0]
    assert "sample Pod(s) gpu-workload (samplePods): evicted when a roll-out drains its node" in minor


def test_the_summary_names_the_pods_claim_templates_and_queues_a_change_deletes():
    """h39 #1: the first line said nothing when samplePods off deleted the sample Pod, when a user template went, or
    when a team's ClusterQueue went with its namespace; an object inside a deleted namespace goes unnamed with it."""
    baseline = _baseline("dev")
    off = build_plan(
        "dev", config={**load_stack_config("dev"), "nebius-dra:samplePods": "false"}, baseline=baseline, out=None
    )
    for summary in (render_text(off).splitlines()[0], render_markdown(off).splitlines()[2]):
        assert "; deletes Pod(s) dra-samples/gpu-workload" in summary, summary
    without = build_plan(
        "prod",
        config={**load_stack_config("prod"), "nebius-dra:userClaimTemplates": "[]"},
        out=None,
        baseline=_baseline("prod"),
    )
    assert (
        "; deletes claim template(s) dra-samples/h200-full-node (userClaimTemplates)"
        in render_text(without).splitlines()[0]
    )
    summary = render_text(build_plan("prod", config=prod_with({"teams": TEAMS[:1]}), out=None, baseline=_queued_prod()))
    summary = summary.splitlines()[0]
    assert "; deletes namespace(s) inference with all in them; deletes ClusterQueue(s) inference" in summary, summary
    assert "LocalQueue" not in summary and "inference/gpu" not in summary


def _teams(**edits: Any) -> list[dict[str, Any]]:
    teams = copy.deepcopy(TEAMS)
    teams[0].update(edits)
    return teams


def test_a_queue_quota_or_cohort_change_is_named_with_what_kueue_does():
    """h39 #2: a ClusterQueue's quota or cohort changed in place without a word ("Nothing recorded differs")."""
    baseline = _queued_prod()
    teams = _teams(cohort="other")
    teams[0]["quotas"][0]["gpus"] = 16
    plan = build_plan("prod", config=prod_with({"teams": teams}), out=None, baseline=baseline)
    for shown in (render_text(plan), _changed(render_markdown(plan))):
        changed = shown.split("Policy verdicts", 1)[0]
        assert "Nothing recorded differs" not in changed and "NOT IN THE TABLE" not in changed
        assert "KUBERNETES OBJECTS UPDATED" in changed
        assert "ClusterQueue research: in place: Kueue updates the ClusterQueue in place" in changed
        assert "spec.cohortName: h200 -> other" in changed
        # Newcomer a39: the flavor and the resource are named, not given by position.
        assert "spec.resourceGroups[0].flavors[h200-train].resources[nvidia.com/gpu].nominalQuota: 24 -> 16" in changed
        assert "https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/" in changed
    assert plan_document(plan)["changes"]["objects"][0]["name"] == "ClusterQueue research"
    older = copy.deepcopy(baseline)
    for record in older["objects"]:
        record.pop("spec", None)
    unknown = render_text(build_plan("prod", config=prod_with({"teams": teams}), out=None, baseline=older))
    assert "Not known: the baseline does not record the Kueue queues' and flavors' specs" in unknown


def test_a_team_renamed_under_its_local_queue_fails_pulumi_up_and_a_deleted_queue_says_what_kueue_does():
    """h39 #2: LocalQueue.spec.clusterQueue is immutable (Kueue's CRD validation), so the API server refuses the
    update; a deleted ClusterQueue waits on Kueue's finalizer, a deleted LocalQueue leaves its pending work stuck."""
    pinned = _teams(namespace="research", localQueue="research")
    baseline = json.loads(json.dumps(plan_document(build_plan("prod", config=prod_with({"teams": pinned}), out=None))))
    renamed = _teams(name="research2", namespace="research", localQueue="research")
    text = render_text(build_plan("prod", config=prod_with({"teams": renamed}), out=None, baseline=baseline))
    assert "; `pulumi up` FAILS updating LocalQueue research/research (an immutable field)" in text.splitlines()[0]
    assert "LocalQueue research/research: refused by the API server: `pulumi up` fails updating it" in text
    assert "spec.clusterQueue: research -> research2" in text and 'rule "self == oldSelf"' in text
    assert "ClusterQueue research DELETED, but Kueue's finalizer (kueue.x-k8s.io/resource-in-use)" in text
    # A LocalQueue deleted while its namespace stays (one in a deleted namespace goes with it, on the namespace's line).
    moved = _teams(namespace="research", localQueue="research-q")
    gone = render_text(build_plan("prod", config=prod_with({"teams": moved}), out=None, baseline=baseline))
    assert "LocalQueue research/research DELETED at once (Kueue puts no finalizer on a LocalQueue)" in gone
    assert "NOT IN THE TABLE" not in gone


def _queued_prod() -> dict[str, Any]:
    return json.loads(json.dumps(plan_document(build_plan("prod", config=prod_with({"teams": TEAMS}), out=None))))


MIRROR_ONLY = {"nebius-dra:draDriverRepository": "https://charts.mirror.example/nvidia"}
# A stack file's secret as `pulumi config set --secret` writes it: the offline plan reads only its placeholder.
WITH_LOGIN = {
    **MIRROR_ONLY,
    "nebius-dra:chartRepositoryUsername": "robot-h39",
    "nebius-dra:chartRepositoryPassword": {"secure": "v1:c2VjcmV0LWNpcGhlcnRleHQ="},
}


def _login_plan(tmp_path: Path, values: dict[str, Any], baseline: Any = None, folder: str = "now") -> Any:
    document = yaml.safe_load((PROJECT_DIR / "Pulumi.dev.yaml").read_text())
    document["config"].update(values)
    (tmp_path / folder).mkdir(exist_ok=True)
    path = tmp_path / folder / "Pulumi.dev.yaml"
    path.write_text(yaml.safe_dump(document))
    return build_plan("dev", out=None, stack_file=path, baseline=baseline)


def test_a_chart_repository_login_added_or_removed_updates_the_release_without_showing_it(tmp_path):
    """h39 #3: a login alone changed read "Nothing recorded differs", though Pulumi updates the release (its
    repositoryOpts are an input); the plan records whether a login is set, never the username or the password."""
    without = json.loads(json.dumps(plan_document(_login_plan(tmp_path, MIRROR_ONLY, folder="base"))))
    with_login = json.loads(json.dumps(plan_document(_login_plan(tmp_path, WITH_LOGIN, folder="base"))))
    driver = next(r for r in with_login["releases"] if "dra-driver" in r["name"])
    assert driver["repositoryOpts"] == {"repo": MIRROR_ONLY["nebius-dra:draDriverRepository"], "login": "set"}
    for baseline, values, move in ((without, WITH_LOGIN, "none -> set"), (with_login, MIRROR_ONLY, "set -> none")):
        plan = _login_plan(tmp_path, values, baseline)
        text, markdown = render_text(plan), render_markdown(plan)
        for shown in (text, _changed(markdown)):
            changed = shown.split("Policy verdicts", 1)[0]
            assert "Nothing recorded differs" not in changed and "NOT IN THE TABLE" not in changed
            assert "HELM RELEASES UPDATED: chart repository login or TLS files (values never shown)" in changed
            assert f"repositoryOpts.login: {move}" in changed and "no pod restarts" in changed
        shown_everywhere = text + markdown + json.dumps(plan_document(plan))
        assert "robot-h39" not in shown_everywhere and "c2VjcmV0" not in shown_everywhere


def test_a_login_set_in_both_plans_is_not_called_unchanged(tmp_path):
    """h39 #3: with a login on both sides its change cannot be seen (nothing of it is recorded): the plan says so,
    and what a change would do, instead of "no change"."""
    baseline = json.loads(json.dumps(plan_document(_login_plan(tmp_path, WITH_LOGIN, folder="base"))))
    other = {**WITH_LOGIN, "nebius-dra:chartRepositoryUsername": "robot-h39-new"}
    text = render_text(_login_plan(tmp_path, other, baseline))
    assert "Nothing recorded differs" not in text and "robot-h39" not in text
    assert "Not known: whether the chart repository login of dra-dev-dra-driver-release changed" in text
    assert "`pulumi up` updates these release(s)" in text
    older = copy.deepcopy(baseline)
    for release in older["releases"]:
        release["repositoryOpts"] = (
            None if release["repositoryOpts"]["login"] == "set" else {"repo": release["repositoryOpts"]["repo"]}
        )
    text = render_text(_login_plan(tmp_path, other, older))
    assert "Not known: whether the chart repository login of dra-dev-dra-driver-release changed" in text
    assert "HELM CHART SOURCE CHANGED" not in text and "NOT IN THE TABLE" not in text


def test_lifting_a_group_protection_is_shown_with_what_a_later_removal_does(prod_baseline):
    """a39 F1: `protect: true -> false` planned as "Nothing recorded differs", step one of an unwarned deletion."""
    config = {**load_stack_config("prod"), "nebius-dra:protect": "false"}
    plan = build_plan("prod", config=config, out=None, baseline=prod_baseline)
    text = render_text(plan)
    assert (
        "; LIFTS the deletion protection of node group(s) dra-prod-h200-burst, dra-prod-h200-train"
        in (text.splitlines()[0])
    )
    for shown in (text, _changed(render_markdown(plan))):
        assert "Nothing recorded differs" not in shown
        assert (
            "DELETION PROTECTION LIFTED (nebius-dra:protect) on node group h200-train: protect: true -> false" in shown
        )
        assert "a later `pulumi up` that leaves the group out deletes it with all its nodes" in shown
        assert "https://www.pulumi.com/docs/iac/concepts/options/protect/" in shown


def test_a_cluster_rename_is_an_in_place_rename_of_the_cluster_and_its_groups():
    """a39 F2: `clusterName` renames every Nebius resource of the stack; it planned as "Nothing recorded differs"."""
    config = {**load_stack_config("dev"), "nebius-dra:clusterName": "dra-renamed"}
    plan = build_plan("dev", config=config, out=None, baseline=_baseline("dev"))
    for shown in (render_text(plan), _changed(render_markdown(plan))):
        assert "Nothing recorded differs" not in shown and "NOT IN THE TABLE" not in shown
        changed = shown.split("IN PLACE (no node replaced)", 1)[1]
        assert "name: dra-dev -> dra-renamed" in changed and "name: dra-dev-h200 -> dra-renamed-h200" in changed


def test_a_driver_downgrade_within_its_chart_line_is_named_a_downgrade_not_an_upgrade():
    """a39 F3: 0.4.2 -> 0.4.1 printed "HELM UPGRADES"; Helm allows it, and says what it does (CRDs untouched)."""
    line = {
        **load_stack_config("dev"),
        "nebius-dra:draDriverChart": "dra-driver-nvidia-gpu",
        "nebius-dra:draDriverVersion": "0.4.2",
    }

    def baseline_of(config: dict[str, str]) -> dict[str, Any]:
        return json.loads(json.dumps(plan_document(build_plan("dev", config=config, out=None))))

    baseline = baseline_of(line)
    plan = build_plan("dev", config={**line, "nebius-dra:draDriverVersion": "0.4.1"}, out=None, baseline=baseline)
    text = render_text(plan)
    assert "; DOWNGRADES Helm release(s) dra-dev-dra-driver-release (0.4.2 -> 0.4.1)" in text.splitlines()[0]
    for shown in (text, _changed(render_markdown(plan))):
        assert "HELM UPGRADES" not in shown and "HELM DOWNGRADES" in shown
        assert "a DOWNGRADE, which Helm allows" in shown and "the CRDs are not touched" in shown
        assert "version: 0.4.2 -> 0.4.1" in shown
    upgraded = build_plan(
        "dev", config=line, out=None, baseline=baseline_of({**line, "nebius-dra:draDriverVersion": "0.4.1"})
    )
    assert "HELM UPGRADES" in render_text(upgraded) and "DOWNGRADE" not in render_text(upgraded)
