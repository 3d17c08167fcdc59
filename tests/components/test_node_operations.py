"""GPU node groups as operators run them: roll-out strategy, auto-repair, capacity (on-demand, reserved, spot).

The config is parsed from the real stack files with one change at a time; the real program
then runs under the mock engine, so what reaches Nebius is what `pulumi up` would send.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.config import ConfigError, parse_stack_config
from components.config.stack_file import load_stack_config, program_config
from components.model import GPU_ROLLOUT, SYSTEM_ROLLOUT, Capacity, NodeAmount, RolloutStrategy, duration_seconds
from tests.helpers import beyond_the_unlisted_minor, with_gpu_groups_changed
from tools.plan.mock_engine import ProgramRun, run_program
from tools.plan.model import build_plan

NODE_GROUP = "nebius:index/mk8sV1NodeGroup:Mk8sV1NodeGroup"
PRICING_POLICY = "nebius:index/billingV1PricingPolicy:BillingV1PricingPolicy"
BLOCKS = ["capacityblockgroup-e00aaaa", "capacityblockgroup-e00bbbb"]


def with_groups(stack: str, **changes: Any) -> dict[str, str]:
    """The stack's config with `changes` applied to every GPU group (a value None removes the field)."""
    return with_gpu_groups_changed(stack, lambda group: changes)


def refused(config: dict[str, str], stack: str = "dev") -> str:
    with pytest.raises(ConfigError) as error:
        parse_stack_config(program_config(config), stack)
    return str(error.value)


def node_groups(run: ProgramRun) -> dict[str, dict[str, Any]]:
    assert run.error is None, run.error
    return {resource.inputs["name"]: resource.inputs for resource in run.of_type(NODE_GROUP)}


# Every stack sends an explicit strategy, with the defaults chosen for GPU groups and the system group.


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_node_group_of_dev_and_prod_sends_its_strategy(stack_runs, stack):
    groups = node_groups(stack_runs[stack])
    system = groups.pop(f"dra-{stack}-system")
    assert system["strategy"] == {"maxSurge": {"count": 1}, "maxUnavailable": {"count": 0}, "drainTimeout": "10m"}
    assert groups and all(
        group["strategy"] == {"maxSurge": {"count": 0}, "maxUnavailable": {"count": 1}, "drainTimeout": "30m"}
        for group in groups.values()
    )
    assert not any("autoRepair" in group for group in [system, *groups.values()])


def test_the_defaults_are_what_the_docs_promise():
    assert (GPU_ROLLOUT.max_surge, GPU_ROLLOUT.max_unavailable, GPU_ROLLOUT.drain_timeout) == (
        NodeAmount(count=0),
        NodeAmount(count=1),
        "30m",
    )
    assert (SYSTEM_ROLLOUT.max_surge, SYSTEM_ROLLOUT.max_unavailable, SYSTEM_ROLLOUT.drain_timeout) == (
        NodeAmount(count=1),
        NodeAmount(count=0),
        "10m",
    )


def test_a_partial_strategy_keeps_the_other_defaults_and_takes_percentages():
    config = dict(load_stack_config("prod"))
    train, burst = json.loads(config["nebius-dra:gpuNodeGroups"])
    train["strategy"] = {"maxUnavailable": "50%", "drainTimeout": "1h30m"}
    config["nebius-dra:gpuNodeGroups"] = json.dumps([train, burst])
    config["nebius-dra:systemNodeStrategy"] = json.dumps({"drainTimeout": "0"})
    parsed = parse_stack_config(program_config(config), "prod")
    train = parsed.gpu_node_groups[0]
    assert train.strategy == RolloutStrategy(NodeAmount(count=0), NodeAmount(percent=50), "1h30m")
    assert (train.strategy.unavailable_nodes(4), train.strategy.surge_nodes(4), train.strategy.drain_seconds) == (
        2,
        0,
        5400,
    )
    assert parsed.system_nodes.strategy == RolloutStrategy(NodeAmount(count=1), NodeAmount(count=0), "0")
    groups = node_groups(run_program("prod", config=config))
    assert groups["dra-prod-h200-train"]["strategy"] == {
        "maxSurge": {"count": 0},
        "maxUnavailable": {"percent": 50},
        "drainTimeout": "1h30m",
    }


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        *[("0", 0), ("30m", 1800), ("1h30m", 5400), ("1.5h", 5400), ("2d", 172800), ("250ms", 0.25)],
        *[("1500us", 0.0015), ("1500\u00b5s", 0.0015), ("1500\u03bcs", 0.0015)],  # us, micro sign, Greek mu
    ],
)
def test_durations_read_as_nebius_reads_them(text, seconds):
    assert duration_seconds(text) == seconds


@pytest.mark.parametrize("text", ["", "-5m", "5", "5 m", "m", "1h-5m"])
def test_other_durations_are_refused(text):
    with pytest.raises(ValueError):
        duration_seconds(text)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"strategy": {"maxSurge": 0, "maxUnavailable": 0}},
            "strategy: maxSurge 0 and maxUnavailable 0 allow no extra and no unavailable node at 1 node(s)",
        ),
        (
            {"strategy": {"maxUnavailable": "50%"}},
            "strategy: maxSurge 0 and maxUnavailable 50% allow no extra and no unavailable node at 1 node(s)",
        ),
        ({"strategy": {"maxSurge": "150%"}}, 'strategy.maxSurge got "150%"; expected a whole number of nodes from 0'),
        ({"strategy": {"maxSurge": 1.5}}, "strategy.maxSurge got 1.5; expected a whole number of nodes from 0 to 100"),
        ({"strategy": {"maxUnavailable": 101}}, "strategy.maxUnavailable got 101"),
        ({"strategy": {"drainTimeout": "-5m"}}, 'strategy.drainTimeout got "-5m"; expected a duration such as 30m'),
        ({"strategy": {"drainTimeout": 600}}, "strategy.drainTimeout got 600; expected a duration"),
        (
            {"strategy": {"maxSurg": 1}},
            'strategy has unknown field(s) "maxSurg"; did you mean maxSurge?; allowed: maxSurge, maxUnavailable',
        ),
        (
            {"autoRepair": [{"type": "NebiusGPUError", "status": True, "timeout": "10m"}]},
            'autoRepair[0].status got true; allowed: "True", "False" or "Unknown", quoted',
        ),
        (
            {"autoRepair": [{"type": "Ready", "status": "Unknown", "timeout": "5m", "disabled": True}]},
            "autoRepair[0] (Ready=Unknown) sets both timeout and disabled",
        ),
        (
            {"autoRepair": [{"type": "Ready", "status": "Unknown"}]},
            "autoRepair[0] (Ready=Unknown) sets neither timeout nor disabled: true",
        ),
        # Hostile review (F13): a timeout of 0s recreated a node the moment the condition appeared.
        (
            {"autoRepair": [{"type": "NebiusGPUError", "status": "True", "timeout": "29.9s"}]},
            "autoRepair[0] (NebiusGPUError=True) got timeout 29.9s; expected at least 30s: Nebius's shortest own rule",
        ),
        (
            {
                "autoRepair": [
                    {"type": "NebiusGPUError", "status": "True", "timeout": "5m"},
                    {"type": "NebiusGPUError", "status": "True", "disabled": True},
                ]
            },
            "autoRepair[1] (NebiusGPUError=True) repeats condition NebiusGPUError=True",
        ),
        (
            {"autoRepair": [{"type": "nebius gpu", "status": "True", "timeout": "5m"}]},
            "autoRepair[0].type got",
        ),
        ({"capacity": {"type": "preemptible"}}, 'capacity.type got "preemptible"; allowed: on-demand, reserved, spot'),
        ({"capacity": {}}, "capacity.type is required"),
        (
            {"capacity": {"type": "reserved", "reservationPolicy": "FORBID"}},
            "capacity is reserved with reservationPolicy FORBID, which never uses a capacity block",
        ),
        (
            {"capacity": {"type": "reserved", "reservationPolicy": "auto"}},
            'capacity.reservationPolicy got "auto"; allowed: AUTO, FORBID, STRICT',
        ),
        (
            {"capacity": {"type": "spot", "reservationPolicy": "STRICT"}},
            "capacity is spot, but sets reservationPolicy or capacityBlockGroupIds",
        ),
        (
            {"capacity": {"type": "on-demand", "capacityBlockGroupIds": BLOCKS}},
            "capacity is on-demand, which takes only reservationPolicy FORBID (to keep the group off your capacity "
            "blocks) and no capacityBlockGroupIds; got 2 capacity block group(s)",
        ),
        (
            {"capacity": {"type": "on-demand", "reservationPolicy": "STRICT"}},
            'got reservationPolicy "STRICT": use type: reserved',
        ),
        (
            {"capacity": {"type": "reserved", "maxPricePerGpuHour": "3.5"}},
            "capacity.maxPricePerGpuHour is set on reserved capacity",
        ),
        ({"capacity": {"type": "spot", "maxPricePerGpuHour": 3.515}}, "capacity.maxPricePerGpuHour got 3.515"),
        ({"capacity": {"type": "spot", "maxPricePerGpuHour": "3.5155"}}, "at most 3 decimals, quoted"),
        (
            {"capacity": {"type": "reserved", "capacityBlockGroupIds": [BLOCKS[0], BLOCKS[0]]}},
            f"capacity.capacityBlockGroupIds repeats {BLOCKS[0]}",
        ),
        (
            {"capacity": {"type": "reserved", "capacityBlockGroupIds": ["block 1"]}},
            "capacity.capacityBlockGroupIds[0] got",
        ),
        (
            {"capacity": {"type": "reserved"}, "strategy": {"maxSurge": 1}},
            "capacity is reserved STRICT but strategy.maxSurge is 1",
        ),
        (
            {"capacity": {"type": "reserved", "reservationPolicy": "STRICT"}, "strategy": {"maxSurge": "10%"}},
            "capacity is reserved STRICT but strategy.maxSurge is 10%",
        ),
    ],
)
def test_a_gpu_group_nebius_would_refuse_is_refused_with_its_entry(changes, expected):
    message = refused(with_groups("dev", **changes))
    assert "nebius-dra:gpuNodeGroups entry h200: " in message
    assert expected in message


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        (
            "systemNodeStrategy",
            {"maxSurge": 0, "maxUnavailable": 0},
            "nebius-dra:systemNodeStrategy: maxSurge 0 and maxUnavailable 0 allow no extra",
        ),
        ("systemNodeStrategy", {"drainTimeout": "soon"}, "nebius-dra:systemNodeStrategy: drainTimeout got"),
        ("systemNodeStrategy", [], "nebius-dra:systemNodeStrategy: got []"),
        (
            "systemNodeAutoRepair",
            [{"type": "Ready", "status": "False"}],
            "nebius-dra:systemNodeAutoRepair: [0] (Ready=False) sets neither timeout nor disabled",
        ),
        (
            "systemNodeAutoRepair",
            [{"type": "Ready", "status": "False", "timeout": "0s"}],
            "nebius-dra:systemNodeAutoRepair: [0] (Ready=False) got timeout 0s; expected at least 30s",
        ),
    ],
)
def test_the_system_groups_strategy_and_repair_are_refused_by_key(key, value, expected):
    config = dict(load_stack_config("dev"))
    config[f"nebius-dra:{key}"] = json.dumps(value)
    assert expected in refused(config)


def test_a_percentage_that_rounds_to_zero_on_the_smallest_size_is_refused_where_it_does():
    """50% of an autoscaled group's minimum of 1 node rounds down to 0; of a fixed group of 4 it is 2."""
    config = with_groups("prod", strategy={"maxUnavailable": "50%"})
    message = refused(config, "prod")
    assert "entry h200-burst: strategy: maxSurge 0 and maxUnavailable 50% allow no extra" in message
    assert "entry h200-train" not in message


def test_a_surge_on_reserved_auto_or_a_reservation_without_blocks_is_accepted():
    config = with_groups("dev", capacity={"type": "reserved", "reservationPolicy": "AUTO"}, strategy={"maxSurge": 1})
    [group] = parse_stack_config(program_config(config), "dev").gpu_node_groups
    assert group.capacity == Capacity("reserved", "AUTO")
    assert str(group.capacity) == "reserved AUTO (any suitable capacity block)"


# What reaches Nebius: a reserved group, a spot group (following the spot price or capped), auto-repair.


def test_a_reserved_group_plans_with_its_policy_and_blocks_in_order(stack_config):
    run = run_program(
        "prod", config=with_groups("prod", capacity={"type": "reserved", "capacityBlockGroupIds": BLOCKS})
    )
    for group in [g for name, g in node_groups(run).items() if not name.endswith("-system")]:
        template = group["template"]
        assert template["reservationPolicy"] == {"policy": "STRICT", "reservationIds": BLOCKS}
        assert not {"preemptible", "followsSpotPrice", "spotPricingPolicy", "onDemand"} & set(template)
        assert group["strategy"]["maxSurge"] == {"count": 0}
    assert run.of_type(PRICING_POLICY) == []


def test_an_on_demand_group_sends_no_capacity_field_unless_it_forbids_reservations():
    plain = node_groups(run_program("dev", config=with_groups("dev")))["dra-dev-h200"]["template"]
    assert not {"reservationPolicy", "preemptible", "onDemand", "followsSpotPrice"} & set(plain)
    forbid = with_groups("dev", capacity={"type": "on-demand", "reservationPolicy": "FORBID"})
    template = node_groups(run_program("dev", config=forbid))["dra-dev-h200"]["template"]
    assert template["reservationPolicy"] == {"policy": "FORBID"}


def test_a_spot_group_follows_the_spot_price_by_default():
    config = with_groups("dev", capacity={"type": "spot"})
    [group] = parse_stack_config(program_config(config), "dev").gpu_node_groups
    assert group.spot and str(group.capacity) == "spot (follows the spot price)"
    run = run_program("dev", config=config)
    template = node_groups(run)["dra-dev-h200"]["template"]
    assert (template["preemptible"], template["followsSpotPrice"]) == ({}, {})
    assert "spotPricingPolicy" not in template and run.of_type(PRICING_POLICY) == []


def test_a_spot_group_with_a_maximum_price_gets_its_own_pricing_policy():
    run = run_program("prod", config=with_groups("prod", capacity={"type": "spot", "maxPricePerGpuHour": "3.515"}))
    policies = {policy.inputs["name"]: policy for policy in run.of_type(PRICING_POLICY)}
    assert set(policies) == {"dra-prod-h200-train", "dra-prod-h200-burst"}
    for name, policy in policies.items():
        assert policy.inputs["parentId"] == "project-e00prod000000000000"
        assert policy.inputs["computeInstanceSpec"] == {"v1": {"platform": "gpu-h200-sxm"}}
        assert policy.inputs["pricing"] == {"maxPriceV1": {"maxPrice": "3.515"}}
        assert policy.protect
        [group] = [r for r in run.of_type(NODE_GROUP) if r.inputs["name"] == name]
        assert group.inputs["template"]["spotPricingPolicy"] == {"id": f"{policy.name}-id"}
        assert "followsSpotPrice" not in group.inputs["template"]
        assert policy.urn in group.dependencies


def test_auto_repair_reaches_nebius_with_its_enums():
    repair = [
        {"type": "NebiusGPUError", "status": "True", "timeout": "10m"},
        {"type": "Ready", "status": "Unknown", "disabled": True},
    ]
    config = with_groups("dev", autoRepair=repair)
    config["nebius-dra:systemNodeAutoRepair"] = json.dumps(repair[1:])
    groups = node_groups(run_program("dev", config=config))
    assert groups["dra-dev-h200"]["autoRepair"] == {
        "conditions": [
            {"type": "NebiusGPUError", "status": "TRUE", "timeout": "10m"},
            {"type": "Ready", "status": "UNKNOWN", "disabled": True},
        ]
    }
    assert groups["dra-dev-system"]["autoRepair"] == {
        "conditions": [{"type": "Ready", "status": "UNKNOWN", "disabled": True}]
    }


def test_a_reserved_training_group_and_a_spot_burst_group_plan_with_no_finding():
    config = dict(load_stack_config("prod"))
    train, burst = json.loads(config["nebius-dra:gpuNodeGroups"])
    train["capacity"] = {"type": "reserved", "reservationPolicy": "STRICT", "capacityBlockGroupIds": BLOCKS}
    burst["capacity"] = {"type": "spot", "maxPricePerGpuHour": "3.515"}
    config["nebius-dra:gpuNodeGroups"] = json.dumps([train, burst])
    plan = build_plan("prod", config=config, out=None)
    assert plan.error is None and beyond_the_unlisted_minor(plan.findings) == []


def test_spot_on_the_fabric_plans_with_the_advisory_finding():
    config = dict(load_stack_config("prod"))
    train, burst = json.loads(config["nebius-dra:gpuNodeGroups"])
    train["capacity"] = {"type": "spot"}
    config["nebius-dra:gpuNodeGroups"] = json.dumps([train, burst])
    plan = build_plan("prod", config=config, out=None)
    [finding] = beyond_the_unlisted_minor(plan.findings)
    assert (finding.policy, finding.mandatory) == ("spot-infiniband", False)
    assert 'Mk8sV1NodeGroup "dra-prod-gpu-h200-train-nodes"' in finding.message
    assert not plan.blocked
