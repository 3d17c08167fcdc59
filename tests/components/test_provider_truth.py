"""Every input the program sends to Nebius, checked against what the installed pulumi-nebius SDK documents.

The check is tests/nebius_inputs.py's: this module runs it over the real program of every stack
and of configs beyond the stack files (every mode the program can put on a Nebius resource), and
checks the check itself: its parser, its limits and rules against the SDK's own words. The config
layer refuses bad values with a message first; this is the safety net at the resource level.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from typing import Any

import pulumi_nebius
import pytest
import yaml
from pulumi import _types as pulumi_types

from components.config.stack_file import load_stack_config
from components.dra_constants import OPERANDS_OFF_LABEL, OPERATOR_DRIVER_ROOT, TAINT_EFFECTS
from tests.helpers import STACKS
from tests.nebius_inputs import (
    CLUSTER,
    LIMITS,
    NODE_GROUP,
    PACKAGE,
    POSSIBLE_VALUES,
    RULES,
    SPAN,
    Leaf,
    accepted_values,
    alongside_names,
    documented_values,
    enum_leaves,
    exclusive_fields,
    fields_of,
    problems_of,
    resolve,
    resource_arg_classes,
    run_problems,
    walk,
)
from tools.plan.mock_engine import ProgramRun, run_program

# ---------------------------------------------------------------------------------------------
# Configs beyond the stack files: every mode the program can put on a Nebius resource.
# ---------------------------------------------------------------------------------------------


def _groups(stack: str) -> list[dict[str, Any]]:
    return yaml.safe_load(load_stack_config(stack)["nebius-dra:gpuNodeGroups"])


def _driverless(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{key: value for key, value in group.items() if key != "driversPreset"} for group in groups]


def _tainted(groups: list[dict[str, Any]], effect: str) -> list[dict[str, Any]]:
    taint = {"key": "example.com/dedicated", "value": "gpu", "effect": effect}
    return [{**group, "taints": [*group.get("taints", []), taint]} for group in groups]


def _infiniband(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """GPU clusters take 8-GPU presets only."""
    return [{**group, "infiniband": True, "preset": "8gpu-128vcpu-1600gb"} for group in groups]


def _autoscaled(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    scaled = [{key: value for key, value in group.items() if key != "fixedNodeCount"} for group in groups]
    return [{**group, "autoscaling": {"min": 1, "max": 100}} for group in scaled]


def _mixed(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first group left to the GPU Operator, the others on a preset with the Operator's operands off."""
    first, *rest = groups
    kept = [{**group, "labels": {**group.get("labels", {}), OPERANDS_OFF_LABEL: "false"}} for group in rest]
    return [*_driverless([first]), *kept]


def _with(groups: list[dict[str, Any]], **fields: Any) -> list[dict[str, Any]]:
    return [{**group, **fields} for group in groups]


RESERVED = {"type": "reserved", "capacityBlockGroupIds": ["capacityblockgroup-e00aaaa", "capacityblockgroup-e00bbbb"]}
ROLLOUT = {"maxSurge": "25%", "maxUnavailable": "50%", "drainTimeout": "1h30m"}
REPAIR = [
    {"type": "NebiusGPUError", "status": "True", "timeout": "10m"},
    {"type": "Ready", "status": "Unknown", "disabled": True},
    {"type": "NebiusBootDiskIOError", "status": "True", "timeout": "30s"},
]


def generated_configs(stack: str) -> dict[str, dict[str, Any]]:
    """Named changes to a stack: structured values as Python data, scalars as strings."""
    groups = _groups(stack)
    fabric = {"infinibandFabric": "fabric-3"}
    configs: dict[str, dict[str, Any]] = {
        "operator": {"gpuNodeGroups": _driverless(groups)},
        "infiniband": {"gpuNodeGroups": _infiniband(groups), **fabric},
        "autoscaling": {"gpuNodeGroups": _autoscaled(groups)},
        "node-version": {"kubernetesVersion": "1.34-nebius-node.2"},
        "everything": {
            "gpuNodeGroups": _autoscaled(_infiniband(_driverless(_tainted(groups, "NoExecute")))),
            "kubernetesVersion": "1.35-nebius-node.7",
            "etcdClusterSize": "3",
            **fabric,
        },
    }
    configs |= {
        "reserved-strict": {"gpuNodeGroups": _with(groups, capacity=RESERVED)},
        "reserved-auto": {"gpuNodeGroups": _with(groups, capacity={"type": "reserved", "reservationPolicy": "AUTO"})},
        "on-demand-forbid": {
            "gpuNodeGroups": _with(groups, capacity={"type": "on-demand", "reservationPolicy": "FORBID"})
        },
        "spot": {"gpuNodeGroups": _with(groups, capacity={"type": "spot"})},
        "spot-max-price": {"gpuNodeGroups": _with(groups, capacity={"type": "spot", "maxPricePerGpuHour": "3.515"})},
        "rollout-and-repair": {
            "gpuNodeGroups": _with(groups, strategy=ROLLOUT, autoRepair=REPAIR),
            "systemNodeStrategy": {"maxSurge": "50%", "maxUnavailable": 1, "drainTimeout": "0"},
            "systemNodeAutoRepair": REPAIR[1:2],
        },
    }
    for effect in TAINT_EFFECTS:
        configs[f"taint-{effect}"] = {"gpuNodeGroups": _tainted(groups, effect)}
        configs[f"operator-taint-{effect}"] = {"gpuNodeGroups": _driverless(_tainted(groups, effect))}
    if len(groups) > 1:
        configs["mixed"] = {
            "gpuNodeGroups": _tainted(_mixed(groups), "NoSchedule"),
            "draDriverRoot": OPERATOR_DRIVER_ROOT,
        }
    return configs


def run_with(stack: str, changes: Mapping[str, Any]) -> ProgramRun:
    config = dict(load_stack_config(stack))
    for key, value in changes.items():
        config[f"nebius-dra:{key}"] = value if isinstance(value, str) else json.dumps(value)
    return run_program(stack, config=config)


GENERATED = [(stack, name) for stack in STACKS for name in generated_configs(stack)]


@pytest.fixture(scope="module")
def generated_runs() -> dict[tuple[str, str], ProgramRun]:
    runs = {}
    for stack, name in GENERATED:
        run = run_with(stack, generated_configs(stack)[name])
        assert run.error is None, f"{stack}/{name}: {run.error}"
        runs[(stack, name)] = run
    return runs


# ---------------------------------------------------------------------------------------------
# Tests.
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_every_nebius_input_of_the_stack_is_what_the_sdk_documents(stack_runs, stack):
    assert run_problems(stack_runs[stack]) == []


@pytest.mark.parametrize(("stack", "name"), GENERATED, ids=[f"{stack}-{name}" for stack, name in GENERATED])
def test_every_nebius_input_of_a_generated_config_is_what_the_sdk_documents(generated_runs, stack, name):
    run = generated_runs[(stack, name)]
    assert any(r.type.startswith(PACKAGE) for r in run.resources)
    assert run_problems(run) == []


def test_the_walk_reaches_the_enumerated_fields_the_program_sets(generated_runs):
    reached = set().union(*(enum_leaves(run) for run in generated_runs.values()))
    assert {
        "Mk8sV1NodeGroup.template.taints[].effect",
        "Mk8sV1NodeGroup.template.bootDisk.type",
        "Mk8sV1NodeGroup.template.reservationPolicy.policy",
        "Mk8sV1NodeGroup.autoRepair.conditions[].status",
    } <= reached


def test_the_generated_configs_reach_every_capacity_and_rollout_field(generated_runs):
    """Proof the walk saw spot, reserved, repair and percentages, not only the on-demand defaults."""
    paths = {
        f"{resource.type.rsplit(':', 1)[-1]}.{leaf.path}"
        for run in generated_runs.values()
        for resource in run.resources
        if resource.type.startswith(PACKAGE)
        for leaf in walk(resource.inputs, resource_arg_classes()[resource.type])
        if isinstance(leaf, Leaf)
    }
    assert {
        "Mk8sV1NodeGroup.template.preemptible",
        "Mk8sV1NodeGroup.template.followsSpotPrice",
        "Mk8sV1NodeGroup.template.spotPricingPolicy.id",
        "Mk8sV1NodeGroup.template.reservationPolicy.reservationIds[]",
        "Mk8sV1NodeGroup.strategy.maxSurge.percent",
        "Mk8sV1NodeGroup.strategy.maxUnavailable.count",
        "Mk8sV1NodeGroup.strategy.drainTimeout",
        "Mk8sV1NodeGroup.autoRepair.conditions[].timeout",
        "Mk8sV1NodeGroup.autoRepair.conditions[].disabled",
        "BillingV1PricingPolicy.pricing.maxPriceV1.maxPrice",
    } <= paths


# Every input (Args) class the installed pulumi-nebius defines: what its generator's docstrings are read from.
SDK_INPUT_CLASSES = frozenset(
    cls
    for _, cls in inspect.getmembers(pulumi_nebius, inspect.isclass)
    if pulumi_types.is_input_type(cls) and cls.__name__.endswith("Args")
)


def test_every_cannot_be_set_alongside_docstring_in_the_sdk_names_fields_of_its_class():
    """A change in how the generator words exclusive fields must fail here, not silently allow both."""
    pairs = 0
    for cls in SDK_INPUT_CLASSES:
        mentioned = [field for field in fields_of(cls).values() if "Cannot be set alongside" in (field.doc or "")]
        assert all(alongside_names(field.doc) for field in mentioned), cls.__name__
        exclusive = exclusive_fields(cls)
        pairs += sum(len(others) for others in exclusive.values())
        if cls.__name__.startswith(("Mk8sV1", "BillingV1")):
            assert all(len(exclusive[f.engine_name]) == len(alongside_names(f.doc)) for f in mentioned), cls.__name__
    assert pairs >= 100
    assert exclusive_fields(pulumi_nebius.Mk8sV1NodeGroupTemplateArgs)["followsSpotPrice"] == {
        "onDemand",
        "spotPricingPolicy",
    }
    assert exclusive_fields(pulumi_nebius.Mk8sV1NodeGroupAutoRepairConditionArgs)["timeout"] == {"disabled"}


def test_every_rule_still_says_what_it_quotes():
    for rules in RULES.values():
        for rule in rules:
            assert rule.source
            if rule.quote:
                cls, python_name, words = rule.quote
                doc = next(f.doc for f in fields_of(cls).values() if f.python_name == python_name)
                assert words in " ".join(SPAN.sub(r"\1", doc or "").split()), (cls.__name__, python_name)


def test_the_parser_reads_the_taint_effects_the_sdk_documents():
    effect = fields_of(pulumi_nebius.Mk8sV1NodeGroupTemplateTaintArgs)["effect"]
    assert effect.documented == {"EFFECT_UNSPECIFIED", "NO_EXECUTE", "NO_SCHEDULE", "PREFER_NO_SCHEDULE"}
    assert accepted_values(effect.documented) == {"NO_EXECUTE", "NO_SCHEDULE", "PREFER_NO_SCHEDULE"}
    boot_disk = fields_of(pulumi_nebius.Mk8sV1NodeGroupTemplateBootDiskArgs)["type"]
    assert boot_disk.documented is not None and "NETWORK_SSD" in boot_disk.documented


def test_every_possible_values_docstring_in_the_sdk_yields_values():
    """A change in how the generator writes enum lists must fail here, not silently empty every enum."""
    with_enums = 0
    for cls in SDK_INPUT_CLASSES:
        for field in fields_of(cls).values():
            if field.doc and POSSIBLE_VALUES in field.doc:
                assert field.documented, f"{field.where}: 'Possible values' listed nothing the parser reads"
                with_enums += 1
    assert with_enums >= 50


def test_the_parser_reads_inline_and_bulleted_lists():
    inline = 'Possible values: <span pulumi-lang-python="`16`" pulumi-lang-go="`16`">`16`</span>'
    assert documented_values(inline) == {"16"}
    bulleted = ":\n\n#### Supported values\n\n   Possible values:\n\n   - `A` - first,\n     continued.\n   - `B`:\n"
    assert documented_values(bulleted) == {"A", "B"}
    assert documented_values("no list here") is None


def test_every_limit_names_a_field_the_sdk_has_and_still_says_what_it_quotes():
    for (token, path), limit in LIMITS.items():
        field = resolve(token, path)
        assert limit.source
        if limit.quote:
            assert " ".join(limit.quote.split()) in " ".join((field.doc or "").split()), (token, path)


def _node_group_inputs(**changes: Any) -> dict[str, Any]:
    """A node group's inputs as the engine records them (camelCase, numbers as floats), with `changes` applied."""
    template = {
        "resources": {"platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600gb"},
        "bootDisk": {"sizeGibibytes": 200.0, "type": "NETWORK_SSD"},
        "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
        "metadata": {"labels": {"nvidia.com/gpu.present": "true"}},
    }
    template.update(changes.pop("template", {}))
    return {
        "name": "dra-prod-h200",
        "parentId": "mk8scluster-1",
        "version": "1.34",
        "fixedNodeCount": 2.0,
        "template": template,
        **changes,
    }


def _cluster_inputs(**control_plane: Any) -> dict[str, Any]:
    base = {"subnetId": "vpcsubnet-1", "version": "1.34", "etcdClusterSize": 3.0}
    merged = {key: value for key, value in {**base, **control_plane}.items() if value is not None}
    return {"name": "dra-prod", "parentId": "project-1", "controlPlane": merged}


def test_clean_inputs_pass_the_check():
    assert problems_of(NODE_GROUP, "ng", _node_group_inputs()) == []
    assert problems_of(CLUSTER, "cluster", _cluster_inputs()) == []


def _taint(**fields: str) -> dict[str, Any]:
    return {"template": {"taints": [fields]}}


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            _taint(key="k", value="v", effect="NoSchedule"),
            "template.taints[].effect = 'NoSchedule', but Mk8sV1NodeGroupTemplateTaintArgs.effect takes "
            "NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE",
        ),
        (_taint(key="k", value="v", effect="EFFECT_UNSPECIFIED"), "template.taints[].effect = 'EFFECT_UNSPECIFIED'"),
        (
            _taint(key="k", value="", effect="NO_SCHEDULE"),
            "template.taints[].value = '', but it must be a non-empty value",
        ),
        (
            _taint(key="k", effect="NO_SCHEDULE"),
            "template.taints[].value is required by Mk8sV1NodeGroupTemplateTaintArgs",
        ),
        ({"template": {"bootDisk": {"sizeGibibytes": 64.0, "type": "ssd"}}}, "template.bootDisk.type = 'ssd'"),
        ({"template": {"metadata": {"labels": {"node.kubernetes.io/x": "y"}}}}, "template.metadata.labels = "),
        ({"name": "n" * 64}, f"name = '{'n' * 64}', but it must be 1-63 characters"),
        ({"name": ""}, "name = '', but it must be 1-63 characters"),
        ({"fixedNodeCount": 101.0}, "fixedNodeCount = 101.0, but it must be a whole number 0-100"),
        ({"autoscaling": {"minNodeCount": 1.0, "maxNodeCount": 200.0}}, "autoscaling.maxNodeCount = 200.0"),
        ({"version": "1.34.2"}, "version = '1.34.2', but it must be MAJOR.MINOR or MAJOR.MINOR-nebius-node.N"),
        ({"fixedNodeCountt": 1.0}, "fixedNodeCountt is not a field of Mk8sV1NodeGroupArgs"),
        (
            {"strategy": {"maxSurge": {"count": 0.0}, "maxUnavailable": {"percent": 0.0}, "drainTimeout": "10m"}},
            "strategy.maxSurge and strategy.maxUnavailable are not both 0 does not hold",
        ),
        ({"strategy": {"maxSurge": {"count": 1.0, "percent": 5.0}}}, "strategy.maxSurge.count and"),
        ({"strategy": {"drainTimeout": "-10m"}}, "strategy.drainTimeout = '-10m', but it must be a duration"),
        ({"strategy": {"maxSurge": {"percent": 150.0}}}, "strategy.maxSurge.percent = 150.0"),
        (
            {"autoRepair": {"conditions": [{"type": "Ready", "status": "TRUE", "timeout": "5m", "disabled": True}]}},
            "autoRepair.conditions[].disabled and autoRepair.conditions[].timeout are both set",
        ),
        ({"autoRepair": {"conditions": [{"type": "Ready", "status": "True"}]}}, "status = 'True'"),
        (
            {"template": {"reservationPolicy": {"policy": "FORBID", "reservationIds": ["capacityblockgroup-e00a"]}}},
            "FORBID takes no reservationIds does not hold",
        ),
        ({"template": {"reservationPolicy": {"policy": "NEVER"}}}, "template.reservationPolicy.policy = 'NEVER'"),
        (
            {"template": {"preemptible": {}, "reservationPolicy": {"policy": "STRICT"}}},
            "a preemptible template takes no reservationPolicy",
        ),
        ({"template": {"followsSpotPrice": {}}}, "followsSpotPrice and spotPricingPolicy only on a preemptible"),
        (
            {"template": {"preemptible": {}, "followsSpotPrice": {}, "spotPricingPolicy": {"id": "p"}}},
            "template.followsSpotPrice and template.spotPricingPolicy are both set",
        ),
    ],
)
def test_the_check_refuses_a_node_group_nebius_refuses(changes, expected):
    problems = problems_of(NODE_GROUP, "ng", _node_group_inputs(**changes))
    assert any(expected in problem for problem in problems), problems


@pytest.mark.parametrize(
    ("control_plane", "expected"),
    [
        ({"etcdClusterSize": 5.0}, "controlPlane.etcdClusterSize = 5.0, but it must be 0, 1 or 3"),
        ({"version": "1.34-nebius-node.2"}, "controlPlane.version = '1.34-nebius-node.2', but it must be MAJOR.MINOR"),
        ({"subnetId": None}, "controlPlane.subnetId is required by Mk8sV1ClusterControlPlaneArgs but not sent"),
    ],
)
def test_the_check_refuses_a_cluster_nebius_refuses(control_plane, expected):
    problems = problems_of(CLUSTER, "cluster", _cluster_inputs(**control_plane))
    assert any(expected in problem for problem in problems), problems


def test_a_nebius_type_the_installed_sdk_lacks_is_refused():
    (problem,) = problems_of("nebius:index/mk8sV9Cluster:Mk8sV9Cluster", "x", {})
    assert "not a resource of the installed pulumi-nebius" in problem
