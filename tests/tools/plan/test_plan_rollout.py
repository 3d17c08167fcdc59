"""The plan's roll-outs: what a template change costs per node group, and which changes recreate nodes.

A baseline is the JSON plan of the same stack made before the change (`--baseline`); the tests
make one from the real stack, change what a pull request could change, and plan again.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests.helpers import with_gpu_groups_changed
from tools.plan import __main__ as plan_cli
from tools.plan.baseline import BaselineError, read_baseline
from tools.plan.mock_engine import RegisteredResource
from tools.plan.model import build_plan
from tools.plan.report import plan_document, render_markdown, render_text
from tools.plan.rollout import Rollout, rollout_of

NODE_GROUP = "nebius:index/mk8sV1NodeGroup:Mk8sV1NodeGroup"


@pytest.fixture(scope="module")
def prod_baseline() -> dict[str, Any]:
    """The JSON plan of prod as it is committed: what `--format json` prints on the main branch."""
    return json.loads(json.dumps(plan_document(build_plan("prod", out=None))))


def prod_with(**changes_by_group: dict[str, Any]) -> dict[str, str]:
    """prod with fields of its groups changed (keyword: the group's name with `_`); None removes a field."""
    return with_gpu_groups_changed("prod", lambda group: changes_by_group.get(group["name"].replace("-", "_"), {}))


def node_group(strategy: dict[str, Any] | None, preset: str = "8gpu-128vcpu-1600gb", **scale: Any) -> Rollout:
    inputs: dict[str, Any] = {
        "name": "g",
        "template": {"resources": {"platform": "gpu-h200-sxm", "preset": preset}},
        **(scale or {"fixedNodeCount": 4}),
    }
    if strategy is not None:
        inputs["strategy"] = strategy
    resource = RegisteredResource("urn:g", NODE_GROUP, "g", True, inputs, "", [], {}, "", False)
    rollout = rollout_of(resource, inputs)
    assert rollout is not None
    return rollout


def test_every_node_group_of_prod_shows_its_roll_out(prod_baseline):
    rollouts = {r["name"]: r for r in prod_baseline["rollouts"]}
    assert set(rollouts) == {"dra-prod-h200-train", "dra-prod-h200-burst", "dra-prod-system"}
    train = rollouts["dra-prod-h200-train"]
    assert (train["nodes"], train["surge"], train["unavailable"], train["batches"], train["extraGpus"]) == (
        4,
        0,
        1,
        4,
        0,
    )
    assert train["seconds"] == 4 * (30 * 60 + 15 * 60)
    assert (rollouts["dra-prod-h200-burst"]["smallest"], rollouts["dra-prod-h200-burst"]["nodes"]) == (1, 8)
    assert prod_baseline["recreations"] is None
    text = render_text(build_plan("prod", out=None))
    assert (
        "  h200-train: 4 node(s), 1 at a time (maxSurge 0, maxUnavailable 1), drain up to 30m per batch: "
        "in 4 batch(es) of at most 1 node(s), about 3h00m at most; no extra node"
    ) in text
    assert "  system: 3 node(s), 1 at a time (maxSurge 1, maxUnavailable 0)" in text
    assert "needs 1 extra node(s)" in text


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        (
            {"maxSurge": {"percent": 25}, "maxUnavailable": {"count": 0}, "drainTimeout": "10m"},
            "1 at a time (maxSurge 1, maxUnavailable 0), drain up to 10m per batch: in 4 batch(es) of at most 1 node(s), "
            "about 1h40m at "
            "most; needs 1 extra node(s) (8 GPUs of quota)",
        ),
        (
            {"maxSurge": {"count": 0}, "maxUnavailable": {"percent": 50}, "drainTimeout": "1h"},
            "2 at a time (maxSurge 0, maxUnavailable 2), drain up to 1h00m per batch: in 2 batch(es) of at most 2 "
            "node(s), about 2h30m",
        ),
        (
            {"maxSurge": {"count": 0}, "maxUnavailable": {"count": 1}, "drainTimeout": "0"},
            "no drain timeout: a PodDisruptionBudget can hold it for ever: in 4 batch(es) of at most 1 node(s), no upper "
            "bound",
        ),
        (
            {"maxSurge": {"percent": 10}, "maxUnavailable": {"percent": 30}, "drainTimeout": "30m"},
            "2 at a time (maxSurge 1, maxUnavailable 1)",
        ),
        (None, "strategy left to Nebius's defaults, which change in Q3 2026"),
    ],
)
def test_a_roll_out_counts_batches_time_and_quota_as_nebius_rounds(strategy, expected):
    assert expected in node_group(strategy).describe()


def test_an_autoscaled_group_is_timed_at_its_largest_size():
    rollout = node_group(
        {"maxSurge": {"count": 0}, "maxUnavailable": {"percent": 25}, "drainTimeout": "30m"},
        autoscaling={"minNodeCount": 2, "maxNodeCount": 8},
    )
    assert (rollout.smallest, rollout.nodes, rollout.unavailable, rollout.batches) == (2, 8, 2, 4)
    assert rollout.describe().startswith("2..8 nodes, 2 at a time")
    assert "in up to 4 batch(es) of at most 2 node(s) (at 8 nodes)" in rollout.describe()


def test_a_group_left_without_a_node_during_a_batch_says_so():
    """README's first edit: with maxSurge 0 and maxUnavailable 1, a one-node group has no GPU node meanwhile."""
    strategy = {"maxSurge": {"count": 0}, "maxUnavailable": {"count": 1}, "drainTimeout": "30m"}
    one = node_group(strategy, fixedNodeCount=1)
    assert "while it has 1 node(s), with maxSurge 0 and maxUnavailable 1, it has no GPU node during a batch" in (
        one.capacity()
    )
    two = node_group(strategy, fixedNodeCount=2)
    assert "no GPU node" not in two.capacity()
    assert "while it has 1 node(s)" in two.capacity(fewest=1), "a group growing from one node starts at one"
    surge = node_group({**strategy, "maxSurge": {"count": 1}}, fixedNodeCount=1)
    assert "no GPU node" not in surge.capacity()


def test_without_a_change_the_baseline_finds_nothing_to_recreate(prod_baseline):
    plan = build_plan("prod", out=None, baseline=prod_baseline)
    assert plan.changes is not None and plan.changes.recreated == []
    assert "Nothing recorded differs from the baseline: no node is recreated, no release upgraded" in render_text(plan)
    assert plan_document(plan)["recreations"] == []


def test_turning_dra_off_in_the_baseline_shows_every_node_of_the_group_recreated(prod_baseline):
    """The program always sends dra: true, so the toggle is made in the baseline: the base had DRA off."""
    baseline = copy.deepcopy(prod_baseline)
    train = next(g for g in baseline["nodeGroups"] if g["name"] == "dra-prod-h200-train")
    train["template"]["gpuSettings"]["dra"] = False
    plan = build_plan("prod", out=None, baseline=baseline)
    assert plan.changes is not None
    [recreation] = plan.changes.recreated
    assert recreation.name == "dra-prod-h200-train"
    assert [change.text() for change in recreation.changes] == ["template.gpuSettings.dra: false -> true"]
    text = render_text(plan)
    assert "policies pass, 2 advisory finding(s); recreates the nodes of 1 node group(s)" in text.splitlines()[0]
    assert "RECREATES NODES of 1 node group(s) (template changes against the baseline)" in text
    assert "    template.gpuSettings.dra: false -> true" in text
    markdown = render_markdown(plan)
    changed = markdown.split("### What changed\n", 1)[1].split("\n### ", 1)[0]
    assert "RECREATES NODES of 1 node group(s)" in changed and "  h200-train: 4 node(s)" in changed


def test_capacity_preset_and_disk_changes_recreate_and_labels_taints_and_size_do_not(prod_baseline):
    config = prod_with(
        h200_train={"capacity": {"type": "reserved", "capacityBlockGroupIds": ["capacityblockgroup-e00aaaa"]}},
        h200_burst={
            "capacity": {"type": "spot"},
            "labels": {"workload-class": "other"},
            "taints": [],
            "autoscaling": {"min": 2, "max": 6},
        },
    )
    plan = build_plan("prod", config=config, out=None, baseline=prod_baseline)
    changes = {r["name"]: tuple(r["changes"]) for r in plan_document(plan)["recreations"]}
    assert changes == {
        "dra-prod-h200-train": (
            "template.reservationPolicy.policy: (unset) -> STRICT",
            "template.reservationPolicy.reservationIds[0]: (unset) -> capacityblockgroup-e00aaaa",
        ),
        "dra-prod-h200-burst": ("template.followsSpotPrice: (unset) -> {}", "template.preemptible: (unset) -> {}"),
    }
    # Newcomer 4: the provider fields alone did not say what the user changed; the plan says it in the stack file's
    # words, as `make cost` does ("h200-burst: capacity on-demand -> spot: ...").
    text = render_text(plan).split("RECREATES NODES", 1)[1].split("\nPolicy verdicts", 1)[0]
    for group, moved in (("h200-train", "on-demand -> reserved"), ("h200-burst", "on-demand -> spot")):
        block = text.split(f"\n    {group}: ", 1)[1].split("\n    h200-", 1)[0]
        assert f"\n      capacity {moved} (nebius-dra:gpuNodeGroups[].capacity.type)" in block, block
    config = prod_with(
        h200_burst={"labels": {"workload-class": "other"}, "taints": [], "autoscaling": None, "fixedNodeCount": 2}
    )
    unchanged = build_plan("prod", config=config, out=None, baseline=prod_baseline)
    assert plan_document(unchanged)["recreations"] == []
    assert unchanged.changes is not None and {g.name for g in unchanged.changes.groups} == {"dra-prod-h200-burst"}


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"stack": "dev", "nodeGroups": []}, 'the baseline is a plan of stack "dev", not of prod'),
        ({"stack": "prod"}, "not the JSON of an offline plan"),
        ([], "not the JSON of an offline plan"),
        ({"stack": "prod", "nodeGroups": [{"urn": 1}]}, "not the JSON of an offline plan"),
    ],
)
def test_a_baseline_that_is_no_plan_of_the_stack_is_refused(document, expected):
    with pytest.raises(BaselineError, match=expected):
        read_baseline(document, "prod")


def test_the_cli_compares_with_a_baseline_file_and_refuses_a_bad_one(tmp_path, capsys):
    baseline = tmp_path / "main-prod.json"
    assert plan_cli.main(["--stack", "prod", "--format", "json", "--out", "none"]) == plan_cli.EXIT_OK
    baseline.write_text(capsys.readouterr().out)
    assert plan_cli.main(["--stack", "prod", "--out", "none", "--baseline", str(baseline)]) == plan_cli.EXIT_OK
    assert "no node is recreated" in capsys.readouterr().out
    baseline.write_text(json.dumps({"stack": "dev", "nodeGroups": []}))
    assert plan_cli.main(["--stack", "prod", "--out", "none", "--baseline", str(baseline)]) == plan_cli.EXIT_PROGRAM
    assert 'the baseline is a plan of stack "dev", not of prod' in capsys.readouterr().err


def test_the_resource_tree_shows_capacity_strategy_and_repair(prod_baseline):
    config = prod_with(
        h200_train={"capacity": {"type": "reserved", "capacityBlockGroupIds": ["capacityblockgroup-e00aaaa"]}},
        h200_burst={
            "capacity": {"type": "spot", "maxPricePerGpuHour": "3.515"},
            "autoRepair": [{"type": "NebiusGPUError", "status": "True", "timeout": "10m"}],
        },
    )
    text = render_text(build_plan("prod", config=config, out=None))
    assert "capacity=reservations STRICT (capacityblockgroup-e00aaaa)" in text
    assert "capacity=spot (max price ${dra-prod-gpu-h200-burst-spot-price.id})" in text
    assert "autoRepair=NebiusGPUError=TRUE after 10m" in text
    assert "platform=gpu-h200-sxm  maxPrice=3.515 USD per GPU-hour" in text


def test_the_plan_says_label_and_taint_edits_reach_only_new_nodes():
    from tools.plan.model import build_plan
    from tools.plan.report import LABELS_NOTE, RENDERERS

    plan = build_plan("prod", out=None)
    for renderer in ("text", "markdown"):
        assert LABELS_NOTE in RENDERERS[renderer](plan)
