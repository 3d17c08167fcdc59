"""What a change costs: the price table, the stack's overrides, the estimate, the plan's section and the base diff.

Expected amounts are computed from the table's own entries, so updating a price keeps these tests
true; the arithmetic itself is pinned with a synthetic table.
"""

from __future__ import annotations

import datetime
import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from components.config import ConfigError, parse_stack_config
from components.config.prices import PRICE_TABLE_FILE, PriceTableError, load_price_table, parse_price_table
from components.config.stack_file import PROJECT_DIR, load_stack_config, program_config
from components.cost import COST_ESTIMATE_TYPE
from components.model import PriceTable
from components.resource_presets import OFFERED_PRESETS, OfferedPresets
from components.values.cost import HOURS_PER_30_DAYS, node_price, stack_cost
from tests.git_repository import git
from tests.helpers import STACKS
from tools.cost import __main__ as cost_cli
from tools.cost.render import (
    money,
    render_cost_markdown,
    render_cost_text,
    render_diff_text,
    span,
    with_protected_kept,
)
from tools.plan.model import build_plan
from tools.plan.report import render_json, render_markdown, render_text
from tools.plan.rollout import duration_text

TABLE = yaml.safe_load(PRICE_TABLE_FILE.read_text())
NEBIUS_PAGES = ("https://docs.nebius.com/", "https://nebius.com/")
OVERRIDES = "nebius-dra:priceOverrides"


def gpu_rate(platform: str) -> Decimal:
    [entry] = [e for e in TABLE["gpu"] if e["platform"] == platform]
    return Decimal(str(entry["onDemand"]["usdPerGpuHour"]))


def cpu_node(platform: str, vcpus: int, gib: int) -> Decimal:
    [entry] = [e for e in TABLE["cpu"] if e["platform"] == platform]
    rate = entry["onDemand"]
    return Decimal(str(rate["usdPerVcpuHour"])) * vcpus + Decimal(str(rate["usdPerGibHour"])) * gib


def parsed(stack: str, **changes: str):
    return parse_stack_config(program_config({**load_stack_config(stack), **changes}), stack)


def overrides(**document) -> dict[str, str]:
    return {OVERRIDES: json.dumps(document)}


def h200_override(price: float, presets: list[str] | None = None, **rate) -> dict:
    return {
        "platform": "gpu-h200-sxm",
        "presets": presets or ["8gpu-128vcpu-1600gb"],
        "onDemand": {"usdPerGpuHour": price, "source": "contract NB-2026-17", "date": "2026-11-01", **rate},
    }


# The table


def every_price(entry: dict) -> list[dict]:
    return [entry[capacity] for capacity in ("onDemand", "spot") if entry.get(capacity)]


@pytest.mark.parametrize("entry", [*TABLE["gpu"], *TABLE["cpu"]], ids=lambda e: e["platform"])
def test_every_price_in_the_table_has_a_nebius_source_and_a_date(entry):
    for price in every_price(entry):
        assert price["source"].startswith(NEBIUS_PAGES), price
        assert isinstance(price["date"], str) and datetime.date.fromisoformat(price["date"]) <= datetime.date.today()
    assert entry.get("note"), "say how the figure reached the table"


def test_the_table_loads_and_prices_what_the_stacks_run():
    table = load_price_table()
    assert table.gpu_price("gpu-h200-sxm", "8gpu-128vcpu-1600gb") and table.gpu_price(
        "gpu-h200-sxm", "1gpu-16vcpu-200gb"
    )
    assert table.cpu_price("cpu-d3")


def test_a_preset_the_table_does_not_list_is_unpriced_never_borrowed_from_a_sibling():
    table = load_price_table()
    reason = node_price(table, "gpu-h200-sxm", "2gpu-32vcpu-400gb", spot=False)
    assert reason == (
        "gpu-h200-sxm is priced for presets 1gpu-16vcpu-200gb, 8gpu-128vcpu-1600gb only, not 2gpu-32vcpu-400gb"
    )
    assert node_price(table, "gpu-b300-sxm", "8gpu-192vcpu-2768gb", spot=False) == (
        "no price for GPU platform gpu-b300-sxm"
    )
    assert node_price(table, "cpu-x9", "4vcpu-16gb", spot=False) == "no price for CPU platform cpu-x9"
    assert node_price(table, "cpu-d3", "4vcpu-16gb", spot=True) == "no spot price for cpu-d3"


SYNTHETIC = """
gpu:
  - platform: gpu-x1
    presets: [1gpu-8vcpu-100gb, 4gpu-32vcpu-400gb]
    onDemand: {usdPerGpuHour: 2.25, source: https://nebius.com/prices, date: "2026-01-02"}
    spot: {usdPerGpuHour: 0.9, source: https://nebius.com/prices, date: "2026-01-03"}
cpu:
  - platform: cpu-x1
    onDemand: {usdPerVcpuHour: 0.01, usdPerGibHour: 0.002, source: https://nebius.com/prices, date: "2026-01-04"}
"""


def test_the_arithmetic_per_node():
    table = parse_price_table(SYNTHETIC, "synthetic.yaml")
    gpu = node_price(table, "gpu-x1", "4gpu-32vcpu-400gb", spot=False)
    assert not isinstance(gpu, str)
    assert gpu.usd_per_node_hour == Decimal("9.00") and gpu.basis == "4 GPUs x $2.25 per GPU-hour"
    assert (gpu.source.date, gpu.source.origin) == ("2026-01-02", "synthetic.yaml")
    spot = node_price(table, "gpu-x1", "1gpu-8vcpu-100gb", spot=True)
    assert not isinstance(spot, str) and spot.usd_per_node_hour == Decimal("0.9") and spot.source.date == "2026-01-03"
    cpu = node_price(table, "cpu-x1", "16vcpu-64gb", spot=False)
    assert not isinstance(cpu, str) and cpu.usd_per_node_hour == Decimal("0.288")
    assert cpu.basis == "16 vCPU x $0.01 + 64 GiB x $0.002 per hour"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "gpu: [{platform: gpu-x1, presets: [1gpu-8vcpu-100gb], onDemand: {usdPerGpuHour: 1}}]",
            "gpu[0].onDemand.source is required",
        ),
        (
            'gpu: [{platform: gpu-x1, presets: [1gpu-8vcpu-100gb], onDemand: {usdPerGpuHour: 1, source: s, date: "2026-02-30"}}]',
            'date "2026-02-30" is not a day of the calendar',
        ),
        (
            'gpu: [{platform: gpu-x1, presets: [1gpu-8vcpu-100gb], onDemand: {usdPerGpuHour: 0, source: s, date: "2026-02-03"}}]',
            "expected US dollars per GPU-hour, a number from 0.01 (no Nebius price is lower)",
        ),
        # A price of a billionth priced the fleet at $0.00 and passed every budget (attack 37, F11b).
        (
            'gpu: [{platform: gpu-x1, presets: [1gpu-8vcpu-100gb], onDemand: {usdPerGpuHour: 1e-9, source: s, date: "2026-02-03"}}]',
            "expected US dollars per GPU-hour, a number from 0.01 (no Nebius price is lower)",
        ),
        (
            'cpu: [{platform: cpu-x1, onDemand: {usdPerVcpuHour: 0.00001, usdPerGibHour: 0.000001, source: s, date: "2026-02-03"}}]',
            "expected US dollars per vCPU-hour, a number from 0.0001",
        ),
        (
            'cpu: [{platform: cpu-x1, onDemand: {usdPerVcpuHour: 0.01, usdPerGibHour: 0.000001, source: s, date: "2026-02-03"}}]',
            "expected US dollars per GiB-hour of RAM, a number from 0.00001 (no Nebius price is lower)",
        ),
        # A day to come kept the staleness note from ever appearing.
        (
            'gpu: [{platform: gpu-x1, presets: [1gpu-8vcpu-100gb], onDemand: {usdPerGpuHour: 1, source: s, date: "2999-01-01"}}]',
            'date "2999-01-01" is in the future',
        ),
        (
            'cpu: [{platform: gpu-x1, onDemand: {usdPerVcpuHour: 1, usdPerGibHour: 1, source: s, date: "2026-02-03"}}]',
            'cpu[0] (gpu-x1): platform "gpu-x1" is a GPU platform',
        ),
        (
            'gpu: [{platform: gpu-x1, presets: [1gpu-8vcpu-100gb, 1gpu-8vcpu-100gb], onDemand: {usdPerGpuHour: 1, source: s, date: "2026-02-03"}}]',
            "prices preset(s) 1gpu-8vcpu-100gb again",
        ),
        ("currency: EUR", 'currency got "EUR"; allowed: USD (the default), the only currency: every rate is'),
        ("gpu: [{platform: gpu-x1, presets: [1gpu-8vcpu-100gb], onDemand: {}, price: 3}]", "has unknown field(s)"),
    ],
)
def test_a_broken_table_is_refused_naming_the_file_and_the_entry(text, expected):
    with pytest.raises(PriceTableError) as refused:
        parse_price_table(text, "prices/broken.yaml")
    assert "invalid price table prices/broken.yaml" in str(refused.value)
    assert expected in str(refused.value)
    assert all(line.startswith("  - prices/broken.yaml: ") for line in str(refused.value).splitlines()[1:])


def test_a_missing_table_stops_the_program_with_the_file_named(tmp_path):
    with pytest.raises(ConfigError, match=r"cannot read the price table .*missing\.yaml"):
        load_price_table(tmp_path / "missing.yaml")


# The stacks' estimates


def test_dev_costs_its_one_h200_and_its_system_node():
    cost = stack_cost(parsed("dev"))
    expected = gpu_rate("gpu-h200-sxm") + cpu_node("cpu-d3", 4, 16)
    assert [g.name for g in cost.groups] == ["h200", "system"]
    assert cost.hourly_min == cost.hourly_max == expected
    assert not cost.unpriced


def test_prod_costs_its_fixed_group_its_autoscaled_range_and_its_system_group():
    cost = stack_cost(parsed("prod"))
    node = 8 * gpu_rate("gpu-h200-sxm")
    system = 3 * cpu_node("cpu-d3", 16, 64)
    train, burst, system_group = cost.groups
    assert (train.min_nodes, train.max_nodes, burst.min_nodes, burst.max_nodes) == (4, 4, 1, 8)
    assert train.price and train.price.usd_per_node_hour == node
    assert system_group.node_group == "dra-prod-system" and system_group.kind == "cpu"
    assert (cost.hourly_min, cost.hourly_max) == (4 * node + node + system, 4 * node + 8 * node + system)
    total = cost.as_document()["total"]
    assert total["usdPer30Days"]["max"] == pytest.approx(float(cost.hourly_max * HOURS_PER_30_DAYS))
    assert total["complete"] and total["unpriced"] == []


def test_every_group_of_the_real_stacks_is_priced_on_demand():
    assert {g.capacity for stack in STACKS for g in stack_cost(parsed(stack)).groups} == {"on-demand"}


def test_a_spot_group_is_priced_at_the_spot_price_with_its_note():
    groups = json.loads(load_stack_config("prod")["nebius-dra:gpuNodeGroups"])
    burst = next(group for group in groups if group["name"] == "h200-burst")
    burst["capacity"] = {"type": "spot"}
    cost = stack_cost(parsed("prod", **{"nebius-dra:gpuNodeGroups": json.dumps(groups)}))
    [spot] = [group for group in cost.groups if group.name == "h200-burst"]
    [on_demand] = [group for group in stack_cost(parsed("prod")).groups if group.name == "h200-burst"]
    assert spot.capacity == "spot"
    assert spot.price is not None and on_demand.price is not None
    assert spot.price.usd_per_node_hour < on_demand.price.usd_per_node_hour


def test_an_unpriced_group_is_reported_and_left_out_of_the_total():
    groups = json.loads(load_stack_config("prod")["nebius-dra:gpuNodeGroups"])
    groups.append(
        {
            "name": "b300",
            "platform": "gpu-b300-sxm",
            "preset": "8gpu-192vcpu-2768gb",
            "driversPreset": "cuda13.0",
            "fixedNodeCount": 2,
        }
    )
    cost = stack_cost(parsed("prod", **{"nebius-dra:gpuNodeGroups": json.dumps(groups)}))
    [b300] = cost.unpriced
    assert b300.name == "b300" and b300.unpriced == "no price for GPU platform gpu-b300-sxm"
    assert cost.hourly_max == stack_cost(parsed("prod")).hourly_max
    document = cost.as_document()
    assert document["total"] == {**document["total"], "complete": False, "unpriced": ["b300"]}
    text = "\n".join(render_cost_text(document))
    assert "note: b300 is unpriced: no price for GPU platform gpu-b300-sxm" in text
    assert "total of priced groups (1 unpriced)" in text and "never guessed" in text


# The stack's overrides


def test_an_override_wins_for_its_presets_only_and_names_its_source():
    config = parsed("prod", **overrides(gpu=[h200_override(2.0)]))
    train = stack_cost(config).groups[0]
    assert train.price and train.price.usd_per_node_hour == Decimal("16.0")
    assert (train.price.source.source, train.price.source.date, train.price.source.origin) == (
        "contract NB-2026-17",
        "2026-11-01",
        OVERRIDES,
    )
    single, table = config.prices.gpu_price("gpu-h200-sxm", "1gpu-16vcpu-200gb"), load_price_table()
    assert single and single.on_demand == table.gpu_price("gpu-h200-sxm", "1gpu-16vcpu-200gb").on_demand  # type: ignore[union-attr]


def test_an_override_adds_a_platform_the_table_lacks():
    groups = [{"name": "b300", "platform": "gpu-b300-sxm", "preset": "8gpu-192vcpu-2768gb", "fixedNodeCount": 1}]
    b300 = {**h200_override(7.5, ["8gpu-192vcpu-2768gb"]), "platform": "gpu-b300-sxm"}
    cost = stack_cost(parsed("dev", **{"nebius-dra:gpuNodeGroups": json.dumps(groups)}, **overrides(gpu=[b300])))
    assert not cost.unpriced and cost.groups[0].price and cost.groups[0].price.usd_per_node_hour == Decimal("60.0")


def test_a_cpu_override_replaces_the_platform():
    cpu = {
        "platform": "cpu-d3",
        "onDemand": {"usdPerVcpuHour": 0.02, "usdPerGibHour": 0.005, "source": "x", "date": "2026-11-01"},
    }
    system = stack_cost(parsed("dev", **overrides(cpu=[cpu]))).groups[-1]
    assert system.price and system.price.usd_per_node_hour == Decimal("0.160")


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (
            {"gpu": [{**h200_override(2.0), "onDemand": {"usdPerGpuHour": 2.0, "source": "x"}}]},
            "gpu[0].onDemand.date is required",
        ),
        (
            {"gpu": [h200_override(2.0, date="01/11/2026")]},
            'expected the day the price holds, as a quoted "YYYY-MM-DD"',
        ),
        ({"gpu": [h200_override(2.0, source="")]}, "expected where the price comes from"),
        (
            {"gpu": [h200_override(2.0), h200_override(3.0)]},
            "gpu[1] (gpu-h200-sxm): prices preset(s) 8gpu-128vcpu-1600gb again",
        ),
        ({"gpu": [{**h200_override(2.0), "platform": "cpu-d3"}]}, 'platform "cpu-d3" is not a GPU platform'),
        ({"tpu": []}, 'has unknown field(s) "tpu"'),
        # Hostile review: an override of a platform no node can have was taken, pricing nothing.
        (
            {"gpu": [{**h200_override(2.0), "platform": "gpu-h9000-sxm"}]},
            'gpu[0] (gpu-h9000-sxm): platform "gpu-h9000-sxm" is no GPU platform Nebius lists',
        ),
        (
            {"gpu": [{**h200_override(2.0), "platform": "gpu-h20-sxm"}]},
            "did you mean gpu-h200-sxm? (known: gpu-",
        ),
        (
            {
                "cpu": [
                    {
                        "platform": "cpu-d9",
                        "onDemand": {
                            "usdPerVcpuHour": 0.02,
                            "usdPerGibHour": 0.005,
                            "source": "x",
                            "date": "2026-11-01",
                        },
                    }
                ]
            },
            'cpu[0] (cpu-d9): platform "cpu-d9" is neither a CPU platform the price table knows (cpu-d3, cpu-e2) nor '
            "the stack's nebius-dra:systemNodePlatform (cpu-d3), so it prices no node; did you mean cpu-d3?",
        ),
        # Hostile review (F12): a spot price above the on-demand one, and a source no reader should follow.
        (
            {"gpu": [{**h200_override(3.5), "spot": {"usdPerGpuHour": 9.0, "source": "s", "date": "2026-11-01"}}]},
            "gpu[0] platform gpu-h200-sxm: usdPerGpuHour spot 9.0 > on-demand 3.5; a spot price is at most the "
            "on-demand price of the same platform (https://nebius.com/prices)",
        ),
        (
            {
                "cpu": [
                    {
                        "platform": "cpu-d3",
                        "onDemand": {
                            "usdPerVcpuHour": 0.02,
                            "usdPerGibHour": 0.005,
                            "source": "x",
                            "date": "2026-11-01",
                        },
                        "spot": {"usdPerVcpuHour": 0.01, "usdPerGibHour": 0.006, "source": "x", "date": "2026-11-01"},
                    }
                ]
            },
            "cpu[0] platform cpu-d3: usdPerGibHour spot 0.006 > on-demand 0.005; a spot price is at most",
        ),
        *(
            (
                {"gpu": [h200_override(2.0, source=source)]},
                f"gpu[0].onDemand.source got {shown}; expected where the price comes from: the URL of the Nebius page",
            )
            for source, shown in (
                ("https://u:pw@prices.example.com/", '"<32 characters: letters, ./:@; hidden: may be a credential>"'),
                ("javascript:alert(1)", '"<19 characters: letters, digits, ():; hidden: may be a credential>"'),
                ("ftp://prices.example.com/list", '"ftp://prices.example.com/list"'),
                (
                    "https://nebius.com/prices?x=1",
                    '"<29 characters: letters, digits, ./:=?; hidden: may be a credential>"',
                ),
                (
                    "see https://u:pw@prices.example.com/",
                    '"<36 characters: letters, spaces, ./:@; hidden: may be a credential>"',
                ),
            )
        ),
    ],
)
def test_a_bad_override_is_refused_by_key(document, expected):
    with pytest.raises(ConfigError) as refused:
        parsed("prod", **{OVERRIDES: json.dumps(document)})
    assert f"{OVERRIDES}: " in str(refused.value) and expected in str(refused.value)


def cpu_override(platform: str) -> dict:
    rate = {"usdPerVcpuHour": 0.02, "usdPerGibHour": 0.005, "source": "contract NB-2026-17", "date": "2026-11-01"}
    return {"platform": platform, "onDemand": rate}


@pytest.mark.parametrize(
    ("stack", "document", "expected"),
    [
        (
            "prod",
            {"gpu": [h200_override(2.0, ["1gpu-16vcpu-200gb"])]},
            'gpu[0] (gpu-h200-sxm): prices gpu-h200-sxm preset(s) "1gpu-16vcpu-200gb", which no group of '
            "nebius-dra:gpuNodeGroups runs (they run: gpu-h200-sxm 8gpu-128vcpu-1600gb), so it would price no node",
        ),
        (
            "prod",
            {"gpu": [h200_override(2.0, ["8gpu-128vcpu-1600gb", "1gpu-16vcpu-200gb"])]},
            'gpu[0] (gpu-h200-sxm): prices gpu-h200-sxm preset(s) "1gpu-16vcpu-200gb", which no group',
        ),
        (
            "dev",
            {"gpu": [{**h200_override(2.0, ["8gpu-128vcpu-1600gb"]), "platform": "gpu-h100-sxm"}]},
            'gpu[0] (gpu-h100-sxm): prices gpu-h100-sxm preset(s) "8gpu-128vcpu-1600gb", which no group of '
            "nebius-dra:gpuNodeGroups runs (they run: gpu-h200-sxm 1gpu-16vcpu-200gb)",
        ),
        (
            "dev",
            {"cpu": [cpu_override("cpu-e2")]},
            'cpu[0] (cpu-e2): prices platform "cpu-e2", which no node group runs: only the system nodes run on a CPU '
            "platform, and nebius-dra:systemNodePlatform is cpu-d3, so it would price no node; price cpu-d3, or "
            "remove it",
        ),
    ],
)
def test_an_override_that_prices_no_node_of_the_stack_is_refused_naming_what_the_groups_run(stack, document, expected):
    with pytest.raises(ConfigError) as refused:
        parsed(stack, **overrides(**document))
    assert f"{OVERRIDES}: {expected}" in str(refused.value)


def h200_spot_override(on_demand: float, spot: float) -> dict:
    return {
        **h200_override(on_demand),
        "spot": {"usdPerGpuHour": spot, "source": "contract NB-2026-17", "date": "2026-11-01"},
    }


def test_an_override_spot_rate_no_spot_group_would_use_is_refused_naming_what_the_groups_run():
    with pytest.raises(ConfigError) as refused:
        parsed("prod", **overrides(gpu=[h200_spot_override(3.0, 1.5)]))
    assert (
        f"{OVERRIDES}: gpu[0] (gpu-h200-sxm).spot: prices spot for gpu-h200-sxm 8gpu-128vcpu-1600gb, but no group of "
        "nebius-dra:gpuNodeGroups running them is spot (preemptible: capacity.type spot; they run: gpu-h200-sxm "
        "8gpu-128vcpu-1600gb on-demand), so the spot rate would price no node; remove spot, or run a group on spot"
    ) in str(refused.value)


def test_a_refused_capacity_holds_back_the_check_of_an_override_spot_rate():
    """The stand-in for a refused capacity is on-demand: judging the spot rate against it would blame the override."""
    groups = json.loads(load_stack_config("prod")["nebius-dra:gpuNodeGroups"])
    next(group for group in groups if group["name"] == "h200-burst")["capacity"] = {"type": "sometimes"}
    with pytest.raises(ConfigError) as refused:
        parsed(
            "prod",
            **{"nebius-dra:gpuNodeGroups": json.dumps(groups)},
            **overrides(gpu=[h200_spot_override(3.0, 1.5)]),
        )
    message = str(refused.value)
    assert "capacity" in message and "sometimes" in message
    assert "so the spot rate would price no node" not in message


def test_a_cpu_override_spot_rate_is_refused_as_the_system_nodes_run_on_demand():
    entry = cpu_override("cpu-d3")
    entry["spot"] = {**entry["onDemand"], "usdPerVcpuHour": 0.01, "usdPerGibHour": 0.004}
    with pytest.raises(ConfigError) as refused:
        parsed("dev", **overrides(cpu=[entry]))
    assert (
        f"{OVERRIDES}: cpu[0] (cpu-d3).spot: prices spot for cpu-d3, but the only nodes on a CPU platform, the system "
        "nodes (nebius-dra:systemNodePlatform cpu-d3), run on-demand, never spot, so the spot rate would price no node"
    ) in str(refused.value)


def test_an_override_spot_rate_prices_the_spot_group_that_runs_its_platform_and_preset():
    groups = json.loads(load_stack_config("prod")["nebius-dra:gpuNodeGroups"])
    next(group for group in groups if group["name"] == "h200-burst")["capacity"] = {"type": "spot"}
    cost = stack_cost(
        parsed(
            "prod",
            **{"nebius-dra:gpuNodeGroups": json.dumps(groups)},
            **overrides(gpu=[h200_spot_override(3.0, 1.5)]),
        )
    )
    [burst] = [group for group in cost.groups if group.name == "h200-burst"]
    assert burst.price is not None and burst.price.usd_per_node_hour == Decimal("12.0")


def test_an_override_is_not_called_unused_while_the_group_it_prices_is_refused():
    group = {"name": "big", "platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600gb", "fixedNodeCount": -1}
    with pytest.raises(ConfigError) as refused:
        parsed("dev", **{"nebius-dra:gpuNodeGroups": json.dumps([group])}, **overrides(gpu=[h200_override(2.0)]))
    assert "nebius-dra:gpuNodeGroups" in str(refused.value) and "which no group" not in str(refused.value)


def cost_headers(document: dict) -> tuple[str, str, str]:
    """The text header, the Markdown header, and the JSON's priceBasis of one estimate."""
    return (
        render_cost_text(document)[0],
        render_cost_markdown(document)[0],
        json.loads(json.dumps(document))["priceBasis"],
    )


def test_the_cost_header_says_which_rates_came_from_the_overrides_in_every_format():
    some = stack_cost(parsed("prod", **overrides(gpu=[h200_override(2.0)]))).as_document()
    basis = "list prices, but 2 of 3 rates from nebius-dra:priceOverrides (h200-train, h200-burst)"
    text, markdown, document = cost_headers(some)
    assert text.startswith(f"Cost (USD, GPU and CPU nodes at {basis}; not included: ")
    assert markdown.startswith(f"_USD, GPU and CPU nodes at {basis}; not included: ")
    assert document == basis
    every = stack_cost(
        parsed("prod", **overrides(gpu=[h200_override(2.0)], cpu=[cpu_override("cpu-d3")]))
    ).as_document()
    assert cost_headers(every)[2] == (
        "rates from nebius-dra:priceOverrides (all 3: h200-train, h200-burst, system), no list price"
    )
    assert "at rates from nebius-dra:priceOverrides (all 3: " in cost_headers(every)[0]


def test_the_cost_header_says_list_prices_without_overrides_and_reads_a_document_without_the_basis():
    document = stack_cost(parsed("prod")).as_document()
    assert cost_headers(document)[2] == "list prices"
    assert cost_headers(document)[0].startswith("Cost (USD, GPU and CPU nodes at list prices; not included: ")
    older = stack_cost(parsed("prod", **overrides(gpu=[h200_override(2.0)]))).as_document()
    del older["priceBasis"]
    assert "at list prices, but 2 of 3 rates from nebius-dra:priceOverrides" in render_cost_text(older)[0]


# What the program registers, and what the plan prints


@pytest.mark.parametrize("stack", STACKS)
def test_the_program_registers_the_estimate_the_config_gives(stack, stack_runs):
    [registered] = stack_runs[stack].of_type(COST_ESTIMATE_TYPE)
    assert not registered.custom
    assert json.loads(json.dumps(registered.inputs)) == json.loads(json.dumps(stack_cost(parsed(stack)).as_document()))
    assert registered.parent.endswith(f"nebius-dra:index:DraPlatform::dra-{stack}")


@pytest.mark.parametrize("stack", STACKS)
def test_the_plan_prints_the_cost_in_every_format(stack):
    plan = build_plan(stack, out=None)
    cost = stack_cost(parsed(stack))
    hourly = span(float(cost.hourly_min), float(cost.hourly_max))
    monthly = span(float(cost.hourly_min * HOURS_PER_30_DAYS), float(cost.hourly_max * HOURS_PER_30_DAYS))
    text, markdown = render_text(plan), render_markdown(plan)
    assert text.index("Policy verdicts") < text.index("Cost (USD") < text.index("Resources")
    assert (
        "not included: boot disks, the control plane, the InfiniBand GPU cluster, network, egress and storage" in text
    )
    total = next(line for line in text.splitlines() if line.strip().startswith("total"))
    assert hourly in total and monthly in total
    assert "### Cost" in markdown and f"**{hourly}**" in markdown and f"**{monthly}**" in markdown
    document = json.loads(render_json(plan))["cost"]
    assert document["total"]["hourlyUsd"] == {"min": float(cost.hourly_min), "max": float(cost.hourly_max)}
    for group in cost.groups:
        assert group.price is not None
        assert f"{group.price.source.date}  {group.price.source.source}" in text


def test_money_is_shown_to_the_cent_and_small_rates_to_a_tenth_of_one():
    assert [money(v) for v in (28, 0.528, 0.132, 0.05, 0, 101940.48)] == [
        "$28.00",
        "$0.528",
        "$0.132",
        "$0.05",
        "$0.00",
        "$101,940.48",
    ]
    assert span(28, 224) == "$28.00..$224.00" and span(-3, 5, signed=True) == "-$3.00..+$5.00"


# What a change costs: the base branch against the head


def add_group(directory: Path, group: dict) -> None:
    path = directory / "Pulumi.prod.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"]["nebius-dra:gpuNodeGroups"].append(group)
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    git(directory, "commit", "--quiet", "-am", "head")


FOUR_H200 = {
    "name": "h200-extra",
    "platform": "gpu-h200-sxm",
    "preset": "8gpu-128vcpu-1600gb",
    "driversPreset": "cuda13.0",
    "fixedNodeCount": 4,
}


def test_a_group_added_in_a_change_shows_as_a_cost_difference(repository):
    add_group(repository, FOUR_H200)
    current = cost_cli.head_of("prod", repository)
    head = current.document
    base = cost_cli.base_cost("prod", "HEAD^1", repository)
    assert base.document is not None and base.note is None
    added = 4 * 8 * float(gpu_rate("gpu-h200-sxm"))
    assert head["total"]["hourlyUsd"]["max"] == pytest.approx(base.document["total"]["hourlyUsd"]["max"] + added)
    text = cost_cli.render("prod", current, base, "text")
    change = text[text.index("Cost change against base HEAD^1") :]
    row = next(line for line in change.splitlines() if line.strip().startswith("h200-extra"))
    assert row.split()[1] == "-" and money(added, signed=True) in row
    assert money(added * HOURS_PER_30_DAYS, signed=True) in row
    total = next(line for line in change.splitlines() if line.strip().startswith("total"))
    assert money(added, signed=True) in total
    markdown = cost_cli.render("prod", current, base, "markdown")
    assert "#### What this change costs to `prod` (base HEAD^1)" in markdown and "| h200-extra | - |" in markdown
    assert "### Cost of stack `prod`" in markdown
    change_only = cost_cli.render("prod", current, base, "markdown", change_only=True)
    assert change_only.startswith("#### What this change costs") and "### Cost of stack" not in change_only
    assert json.loads(cost_cli.render("prod", current, base, "json"))["base"]["ref"] == "HEAD^1"


def test_a_price_change_alone_shows_as_a_cost_difference(repository):
    table = repository / "prices" / "nebius.yaml"
    table.write_text(table.read_text().replace("usdPerGpuHour: 3.50", "usdPerGpuHour: 4.50"))
    git(repository, "commit", "--quiet", "-am", "new price")
    head = cost_cli.head_of("prod", repository).document
    base = cost_cli.base_cost("prod", "HEAD^1", repository)
    assert base.document is not None
    change = head["total"]["hourlyUsd"]["max"] - base.document["total"]["hourlyUsd"]["max"]
    assert change == pytest.approx(12 * 8 * 1.0)


def test_a_base_without_the_stack_or_a_table_is_said_so(repository):
    (repository / "prices" / "nebius.yaml").unlink()
    git(repository, "commit", "--quiet", "-am", "no table in the base")
    shutil.copy(PRICE_TABLE_FILE, repository / "prices" / "nebius.yaml")
    git(repository, "add", ".")
    git(repository, "commit", "--quiet", "-m", "table")
    base = cost_cli.base_cost("prod", "HEAD^1", repository)
    assert (
        base.document is not None
        and base.note == "HEAD^1 has no prices/nebius.yaml; its config is priced with this change's table"
    )
    new = cost_cli.base_cost("staging", "HEAD^1", repository)
    assert new.document is None and new.comparable and "has no stack staging" in str(new.note)


def test_a_base_key_this_change_adds_reads_as_its_default(repository):
    project = yaml.safe_load((repository / "Pulumi.yaml").read_text())
    del project["config"][OVERRIDES]
    (repository / "Pulumi.yaml").write_text(yaml.safe_dump(project, sort_keys=False))
    git(repository, "commit", "--quiet", "-am", "base without the key")
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", repository / "Pulumi.yaml")
    git(repository, "commit", "--quiet", "-am", "the change declares it")
    base = cost_cli.base_cost("prod", "HEAD^1", repository)
    assert base.document is not None and base.note is None
    assert base.document["total"] == cost_cli.head_of("prod", repository).document["total"]


def test_a_base_this_code_cannot_read_is_reported_not_fatal(repository):
    stack = repository / "Pulumi.prod.yaml"
    stack.write_text(stack.read_text().replace("etcdClusterSize: 3", "etcdClusterSize: 5"))
    git(repository, "commit", "--quiet", "-am", "broken base")
    shutil.copy(PROJECT_DIR / "Pulumi.prod.yaml", stack)
    git(repository, "commit", "--quiet", "-am", "fixed")
    base = cost_cli.base_cost("prod", "HEAD^1", repository)
    assert base.document is None and not base.comparable
    assert "cannot be priced by this checkout's code" in str(base.note) and "etcdClusterSize" in str(base.note)
    text = cost_cli.render("prod", cost_cli.head_of("prod", repository), base, "text")
    assert "note: the base HEAD^1 cannot be priced" in text and "Cost change against" not in text


def test_the_cli_prices_a_stack_and_refuses_an_unknown_revision(capsys):
    assert cost_cli.main(["--stack", "prod", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["stack"] == "prod" and document["base"] is None and document["cost"]["total"]["complete"]
    assert cost_cli.main(["--stack", "prod", "--base", "no-such-revision-anywhere"]) == 2
    assert "is not a git revision" in capsys.readouterr().err
    assert cost_cli.main(["--stack", "../x"]) == 2
    assert 'invalid stack name "../x": a stack name is 1 to 100 ASCII letters' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cost_cli.main(["--stack", "prod", "--change-only"])
    assert "--change-only needs --base" in capsys.readouterr().err


def test_prices_are_a_table_never_constants_in_code():
    """No module of the program or the pack carries a dollar figure of its own."""
    for path in [*PROJECT_DIR.glob("components/**/*.py"), *PROJECT_DIR.glob("policies/**/*.py")]:
        text = path.read_text()
        for entry in TABLE["gpu"]:
            rate = entry["onDemand"]["usdPerGpuHour"]
            assert f"= {rate}" not in text and f"({rate})" not in text, f"{path} carries the price {rate}"
    assert isinstance(load_price_table(), PriceTable)


def test_a_spot_group_is_priced_at_its_ceiling_with_the_reference_beside_it_and_a_low_ceiling_is_an_advisory():
    groups = json.loads(load_stack_config("prod")["nebius-dra:gpuNodeGroups"])
    groups[1]["capacity"] = {"type": "spot", "maxPricePerGpuHour": "0.50"}
    cost = stack_cost(
        parsed("prod", **{"nebius-dra:gpuNodeGroups": json.dumps(groups)}), today=datetime.date(2026, 1, 1)
    )
    burst = next(group for group in cost.groups if group.name == "h200-burst")
    assert burst.price is not None and burst.price.usd_per_node_hour == Decimal("4.00")
    assert burst.price.basis == "8 GPUs x $0.5 per GPU-hour at most (maxPricePerGpuHour; reference spot $1.45)"
    [advisory] = [c for c in burst.caveats if c.startswith("advisory")]
    assert "below the table's spot price $1.45: while the spot price stays above it, no node may be placed" in advisory
    lines = "\n".join(render_cost_text(cost.as_document()))
    assert "h200-burst: advisory: h200-burst's ceiling $0.5 per GPU-hour is below" in lines
    assert "h200-burst: priced at its ceiling: 8 GPUs x $0.5 per GPU-hour at most" in lines
    assert "2025-09-01 (see notes)" in lines


def test_a_doubtful_or_stale_price_carries_its_caveat():
    fresh = stack_cost(parsed("prod"), today=datetime.date(2026, 1, 1)).groups[0]
    assert [c for c in fresh.caveats if c.startswith("doubtful price (prices/nebius.yaml): likely low")]
    assert not [c for c in fresh.caveats if c.startswith("stale")]
    late = stack_cost(parsed("prod"), today=datetime.date(2026, 12, 1)).groups[0]
    assert "stale price: 2025-10-22 is 405 days old, more than the 365-day freshness limit" in " ".join(late.caveats)
    system = stack_cost(parsed("prod"), today=datetime.date(2026, 12, 1)).groups[-1]
    assert system.caveats == ()


def test_what_a_change_costs_says_what_it_does_to_the_nodes_from_the_table():
    groups = json.loads(load_stack_config("prod")["nebius-dra:gpuNodeGroups"])
    groups[1]["autoscaling"] = {"min": 1, "max": 4}
    groups[0]["capacity"] = {"type": "spot"}
    day = datetime.date(2026, 1, 1)
    base = stack_cost(parsed("prod"), today=day).as_document()
    head = stack_cost(parsed("prod", **{"nebius-dra:gpuNodeGroups": json.dumps(groups)}), today=day).as_document()
    text = "\n".join(render_diff_text(base, head, "base HEAD"))
    assert (
        "what it does: h200-train: capacity on-demand -> spot: nodes replaced in a rolling update under the group's "
        "strategy" in text
    )
    assert "what it does: h200-burst: autoscaling 1..8 -> 1..4: in place: nodes are added or removed" in text
    assert "system" not in text.split("what it does", 1)[1]


def test_a_node_count_change_is_named_by_the_stack_key_that_made_it():
    """README's first edit: `fixedNodeCount: 2` is a fixedNodeCount change, not the cost document's maxNodes."""
    groups = json.loads(load_stack_config("dev")["nebius-dra:gpuNodeGroups"])
    groups[0]["fixedNodeCount"] = 2
    day = datetime.date(2026, 1, 1)
    base = stack_cost(parsed("dev"), today=day).as_document()
    head = stack_cost(parsed("dev", **{"nebius-dra:gpuNodeGroups": json.dumps(groups)}), today=day).as_document()
    text = "\n".join(render_diff_text(base, head, "base HEAD"))
    assert "what it does: h200: fixedNodeCount 1 -> 2: in place: nodes are added or removed" in text
    assert "maxNodes" not in text


def test_leaving_out_a_protected_group_saves_nothing_in_the_cost_change():
    groups = [g for g in json.loads(load_stack_config("prod")["nebius-dra:gpuNodeGroups"]) if g["name"] != "h200-burst"]
    day = datetime.date(2026, 1, 1)
    base = stack_cost(parsed("prod"), today=day).as_document()
    head = stack_cost(parsed("prod", **{"nebius-dra:gpuNodeGroups": json.dumps(groups)}), today=day).as_document()
    after, notes = with_protected_kept(base, head, protected=True)
    text = "\n".join(render_diff_text(base, after, "base HEAD"))
    [total] = [line for line in text.splitlines() if line.strip().startswith("total")]
    assert total.count("$0.00") == 2 and "-$" not in total
    assert "rests on doubtful or stale prices of h200-train, h200-burst (see notes)" in total
    [note] = notes
    assert note.startswith("h200-burst: left out of the stack but protected") and "no saving" in note
    plain, none = with_protected_kept(base, head, protected=False)
    assert plain is head and none == []
    [saving] = [line for line in "\n".join(render_diff_text(base, plain, "b")).splitlines() if "total" in line]
    assert "-$" in saving


def _edit_prod(directory: Path, old: str, new: str) -> None:
    path = directory / "Pulumi.prod.yaml"
    path.write_text(path.read_text().replace(old, new, 1))
    git(directory, "commit", "--quiet", "-am", "head")


def test_a_change_that_replaces_nodes_shows_what_its_surge_nodes_cost(repository):
    """prod's system group: 3 nodes, maxSurge 1, drain 10m; a new preset replaces them one batch at a time with one
    surge node beside them, billed at the new preset's price for the roll-out's upper duration."""
    _edit_prod(repository, "systemNodePreset: 16vcpu-64gb", "systemNodePreset: 32vcpu-128gb")
    current = cost_cli.head_of("prod", repository)
    base = cost_cli.base_cost("prod", "HEAD^1", repository)
    rollout = current.rollouts["system"]
    assert (rollout.surge, rollout.batches) == (1, 3)
    price = float(cpu_node("cpu-d3", 32, 128))
    expected = money(price * rollout.seconds / 3600)
    assert "system: preset 16vcpu-64gb -> 32vcpu-128gb: nodes replaced in a rolling update" in (
        cost_cli.render("prod", current, base, "text")
    )
    for form in ("text", "markdown"):
        shown = cost_cli.render("prod", current, base, form)
        assert (
            f"system: roll-out surge: 1 surge node(s) x {money(price)} per node-hour for about "
            f"{duration_text(rollout.seconds)} (the roll-out's upper estimate) = {expected} at most" in shown
        )
    assert "h200-train: roll-out surge" not in cost_cli.render("prod", current, base, "text")


def test_a_minor_upgrade_replaces_every_group_and_says_what_each_surge_costs(repository):
    _edit_prod(repository, 'kubernetesVersion: "1.34"', 'kubernetesVersion: "1.35"')
    text = cost_cli.render(
        "prod", cost_cli.head_of("prod", repository), cost_cli.base_cost("prod", "HEAD^1", repository), "text"
    )
    for group in ("h200-train", "h200-burst", "system"):
        assert f"{group}: kubernetesVersion 1.34 -> 1.35: every node replaced" in text
    assert "h200-train: roll-out surge: no surge node (maxSurge 0)" in text
    assert "system: roll-out surge: 1 surge node(s) x" in text


CPU_X9 = {"platform": "cpu-x9", "onDemand": {"usdPerVcpuHour": 0.02, "usdPerGibHour": 0.005, "source": "x", "date": "2026-11-01"}}  # fmt: skip


def test_a_system_node_platform_the_price_table_does_not_know_is_refused_naming_the_known_ones():
    """Hostile review: systemNodePlatform cpu-d9 (a slip for cpu-d3) was taken and left unpriced."""
    with pytest.raises(ConfigError) as refused:
        parsed("dev", **{"nebius-dra:systemNodePlatform": "cpu-d9"})
    assert (
        'nebius-dra:systemNodePlatform: got "cpu-d9", which is no CPU platform the price table knows; did you mean '
        "cpu-d3? (known: cpu-d3, cpu-e2; prices/nebius.yaml)"
    ) in str(refused.value)


def test_a_system_node_platform_priced_by_the_stacks_overrides_is_taken(monkeypatch):
    """Once the table of the presets Nebius offers has its row: a platform without one takes no preset (issue 37)."""
    changes = {"nebius-dra:systemNodePlatform": "cpu-x9", **overrides(cpu=[CPU_X9])}
    with pytest.raises(ConfigError, match='has no row for nebius-dra:systemNodePlatform "cpu-x9"'):
        parsed("dev", **changes)
    monkeypatch.setitem(OFFERED_PRESETS, "cpu-x9", OfferedPresets(("4vcpu-16gb",), "https://example.com", "2026-11-01"))
    assert stack_cost(parsed("dev", **changes)).groups[-1].price is not None


def test_a_reader_that_closed_the_pipe_is_no_traceback_and_no_failure():
    """`python -m tools.cost | head -c 100`, as the plan's twin: a reader gone before the estimate is written raised
    BrokenPipeError out of main, a traceback and exit 1."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tools.cost", "--stack", "dev", "--format", "json"],
            stdout=write,
            stderr=subprocess.PIPE,
            cwd=Path(__file__).resolve().parents[3],
            timeout=120,
            check=False,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr.decode()) == (0, "")
