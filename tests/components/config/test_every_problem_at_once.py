"""One run names every problem of a stack: shape and meaning together, never one round per fix.

The three edits a newcomer makes first (issue 25) are planned as they would write them, with the
mistakes such a first try has, and each run must name every problem that the runs after each fix
would name. Then two properties over every place of every key: a value of the wrong shape adds
only its own problem lines (the rules never report a default standing in for it), and a misspelt
field name loses none of the rules' problems, since it is read as the field it most likely means.
"""

from __future__ import annotations

import contextlib
import copy
import json
import typing
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from components.config import stack as stack_module
from components.config.errors import ConfigError, ConfigProblems, add_validation_problems, closest_name, config_key
from components.config.raw import FIELD_KINDS, RawConfig, config_secrets, decode_config
from components.config.salvage import MAX_ROUNDS
from components.config.stack import GROUP_OWN_FIELDS, kubernetes_version_problem, parse_stack_config
from components.config.stack_file import load_stack_config, program_config
from components.input.stack import StackInput
from components.redaction import redacted
from policies.dra_guardrails import PlannedResource, check_resources
from tests.generated_input import VALUES, places, put
from tools.plan.mock_engine import run_program

HELD_BACK = "checks that read a refused value run once it is fixed"


def config_of(stack: str, **documents: Any) -> dict[str, str]:
    """The stack's config strings with the given keys' values replaced (JSON keys as documents)."""
    config = program_config(load_stack_config(stack))
    for key, value in documents.items():
        config[key] = json.dumps(value) if FIELD_KINDS[key] == "json" else value
    return config


def document_of(stack: str, key: str) -> Any:
    return json.loads(program_config(load_stack_config(stack))[key])


def outcome(config: dict[str, str], stack: str = "dev") -> tuple[str, set[str]]:
    """The heading and the set of problem lines of one run (no lines: the stack parses)."""
    try:
        parse_stack_config(config, stack)
    except ConfigError as error:
        heading, *lines = str(error).splitlines()
        return heading, {line.removeprefix("  - ") for line in lines}
    return "", set()


def groups_where(name: str) -> str:
    return f"{config_key('gpuNodeGroups')} entry {name}"


def template_where(name: str) -> str:
    return f"{config_key('userClaimTemplates')} entry {name}"


H100_WITH_INFINIBAND = {
    "name": "h100",
    "platform": "gpu-h100-sxm",
    "preset": "8gpu-128vcpu-1600gb",
    "driversPreset": "cuda12",
    "fixedNodeCont": 2,
    "infiniband": True,
}
TWO_GPUS_AND_A_NIC = {
    "name": "two-gpus-one-nic",
    "requests": [
        {"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "exactCount", "count": 2}},
        {"name": "nic", "exactly": {"deviceClassName": "ib.networking.nebius.ai"}},
    ],
    "constraints": [{"requests": ["gpus", "nic"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}],
}

# The same, as it reads once its shape is right: what remains are problems of meaning.
TWO_GPUS_AND_ONE_NIC = copy.deepcopy(TWO_GPUS_AND_A_NIC)
TWO_GPUS_AND_ONE_NIC["requests"][0]["exactly"]["allocationMode"] = "ExactCount"


def with_burst_in_operator_mode(drain_timeout: str) -> list[dict[str, Any]]:
    groups = document_of("prod", "gpuNodeGroups")
    burst = next(group for group in groups if group["name"] == "h200-burst")
    del burst["driversPreset"]
    burst["strategy"]["drainTimeout"] = drain_timeout
    return groups


def test_an_h100_group_with_infiniband_shows_the_misspelt_count_and_the_missing_fabric_together():
    groups = [*document_of("dev", "gpuNodeGroups"), H100_WITH_INFINIBAND]
    heading, first = outcome(config_of("dev", gpuNodeGroups=groups))
    assert first == {
        f'{groups_where("h100")}: has unknown field(s) "fixedNodeCont"; did you mean fixedNodeCount?; allowed: name, '
        "platform, preset, fixedNodeCount, autoscaling, driversPreset, infiniband, bootDiskSizeGib, labels, taints, "
        "strategy, autoRepair, capacity",
        f"{groups_where('h100')}: infiniband is true but {config_key('infinibandFabric')} is not set; set it to the "
        "fabric of your GPU platform and region (for example fabric-3)",
    }
    # Nothing was taken out (the misspelt field was read as the one it names), so nothing waits.
    assert HELD_BACK not in heading
    h100 = {key: value for key, value in H100_WITH_INFINIBAND.items() if key != "fixedNodeCont"}
    fixed = [*document_of("dev", "gpuNodeGroups"), {**h100, "fixedNodeCount": 2}]
    _, second = outcome(config_of("dev", gpuNodeGroups=fixed))
    assert second and second < first
    assert outcome(config_of("dev", gpuNodeGroups=fixed, infinibandFabric="fabric-3")) == ("", set())


def test_a_group_moved_to_operator_mode_shows_its_bad_duration_and_the_mixed_modes_together():
    heading, first = outcome(config_of("prod", gpuNodeGroups=with_burst_in_operator_mode("30 minutes")), "prod")
    meaning = {line for line in first if "drainTimeout" not in line}
    assert [line for line in first if "drainTimeout" in line] == [
        next(line for line in first if line.startswith(f"{groups_where('h200-burst')}: strategy.drainTimeout got"))
    ]
    # The duration is the group's own: the rules across groups still run; only those reading it wait.
    assert any(
        "have a driversPreset while other groups leave the driver to the GPU Operator" in line for line in meaning
    )
    assert any(line.startswith(f"{config_key('draDriverRoot')}: is required") for line in meaning)
    assert HELD_BACK in heading
    _, second = outcome(config_of("prod", gpuNodeGroups=with_burst_in_operator_mode("30m")), "prod")
    assert second == meaning


def test_a_template_for_two_gpus_and_a_nic_shows_its_misspelt_mode_and_why_it_can_never_be_allocated():
    heading, first = outcome(config_of("dev", userClaimTemplates=[TWO_GPUS_AND_A_NIC]))
    where = template_where("two-gpus-one-nic")
    assert (
        f'{where}: requests[0].exactly.allocationMode got "exactCount"; did you mean ExactCount?; allowed: ExactCount (with count) or All'
        in first
    )
    meaning = {line for line in first if "exactCount" not in line}
    assert any(
        "ib.networking.nebius.ai needs DRANet's NICs, which only InfiniBand GPU groups have" in line for line in meaning
    )
    assert any(
        "asks one node for 2 GPU(s) and 1 NIC(s), but the largest GPU node has 1 GPU(s)" in line for line in meaning
    )
    assert outcome(config_of("dev", userClaimTemplates=[TWO_GPUS_AND_ONE_NIC]))[1] == meaning
    assert HELD_BACK not in heading


def test_a_value_that_hides_what_the_rules_read_says_so_and_reports_no_default_in_its_place():
    """A group whose preset is unreadable would make every template's fit a guess: those rules wait, and say so."""
    groups = [*document_of("dev", "gpuNodeGroups"), {**H100_WITH_INFINIBAND, "preset": "eight-gpus"}]
    heading, lines = outcome(config_of("dev", gpuNodeGroups=groups, userClaimTemplates=[TWO_GPUS_AND_ONE_NIC]))
    assert HELD_BACK in heading
    assert not any("largest GPU node" in line or "DRANet" in line for line in lines), lines
    assert any(line.startswith(f"{groups_where('h100')}: preset got") for line in lines), lines


def test_a_value_whose_text_cannot_be_decoded_leaves_the_other_rules_running():
    config = {**config_of("dev", userClaimTemplates=[TWO_GPUS_AND_ONE_NIC]), "systemNodeCount": "three"}
    heading, lines = outcome(config)
    assert f'{config_key("systemNodeCount")}: got "three"; expected a whole number' in lines
    assert (
        lines - {f'{config_key("systemNodeCount")}: got "three"; expected a whole number'}
        == outcome(config_of("dev", userClaimTemplates=[TWO_GPUS_AND_ONE_NIC]))[1]
    )
    assert HELD_BACK in heading


# Stacks with problems of meaning in them, for the properties: dev with the two-GPU template, prod with
# a group moved to operator mode.
FLAWED = {
    "dev": config_of("dev", userClaimTemplates=[TWO_GPUS_AND_ONE_NIC]),
    "prod": config_of("prod", gpuNodeGroups=with_burst_in_operator_mode("30m")),
}
FLAWED_LINES = {stack: outcome(config, stack)[1] for stack, config in FLAWED.items()}
# Every key's whole value, and every place inside the values of keys written as JSON.
PLACES = [
    (stack, key, place)
    for stack in FLAWED
    for key, info in StackInput.model_fields.items()
    for place in [(), *(places(info.annotation) if FIELD_KINDS[key] == "json" else [])]
]
BOUNDED = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)


def shape_lines(config: dict[str, str]) -> set[str]:
    """The problems of shape alone, as the error wording states them: decoding, the version, the schema, with the
    secret-only keys' values redacted as every run redacts them (a control character in a password reads `[secret]`)."""
    problems = ConfigProblems(config_secrets(RawConfig(config)))
    document, undecodable = decode_config(config, problems)
    version = document.get("kubernetesVersion")
    if isinstance(version, str) and (problem := kubernetes_version_problem(version)):
        problems.add(config_key("kubernetesVersion"), problem)
    try:
        StackInput.model_validate(document)
    except Exception as error:
        add_validation_problems(problems, error, document, StackInput, skip=undecodable)  # type: ignore[arg-type]
    return set(problems.lines)


@BOUNDED
@given(where=st.sampled_from(PLACES), value=VALUES)
def test_a_value_of_the_wrong_shape_adds_only_its_own_problems(where, value):
    stack, key, place = where
    config = dict(FLAWED[stack])
    if FIELD_KINDS[key] == "json":
        document = json.loads(config[key]) if key in config else {}
        config[key] = json.dumps(put(copy.deepcopy(document), place, value))
    else:
        config[key] = value if isinstance(value, str) else json.dumps(value)
    assume(shape_lines(config))  # a value of the right shape may change what the rules find, as it should
    _, lines = outcome(config, stack)
    # A secret the value brings redacts its spellings in every line (a boolean secret's `true` too), the flawed
    # stack's own lines among them.
    secrets = config_secrets(RawConfig(config))
    flawed = {redacted(line, secrets) for line in FLAWED_LINES[stack]}
    assert lines <= shape_lines(config) | flawed, lines - shape_lines(config) - flawed


def misspelt_fields(stack: str) -> list[tuple[str, tuple[Any, ...], str]]:
    """(key, place of a field the stack sets, a misspelling difflib reads as that field) for every set field."""
    found = []
    for key, info in StackInput.model_fields.items():
        if FIELD_KINDS[key] != "json" or key not in FLAWED[stack]:
            continue
        document = json.loads(FLAWED[stack][key])
        for place in places(info.annotation):
            parent = _at(document, place[:-1])
            name = place[-1]
            if isinstance(name, str) and name != "k" and isinstance(parent, dict) and name in parent:
                typo = name[:-1] if len(name) > 3 else name + "x"
                if closest_name(typo, [*list(parent), name]) == name:
                    found.append((key, place, typo))
    return found


def _at(document: Any, place: tuple[Any, ...]) -> Any:
    for step in place:
        if isinstance(step, int):
            if not isinstance(document, list) or not document:
                return None
            document = document[0]
        elif isinstance(document, dict) and step in document:
            document = document[step]
        else:
            return None
    return document


MISSPELT = [(stack, *case) for stack in FLAWED for case in misspelt_fields(stack)]


def test_the_misspelling_cases_cover_groups_templates_and_nested_fields():
    keys = {key for _, key, _, _ in MISSPELT}
    assert {"gpuNodeGroups", "userClaimTemplates"} <= keys
    assert any(len(place) > 3 for _, _, place, _ in MISSPELT)


@pytest.mark.parametrize(("stack", "key", "place", "typo"), MISSPELT)
def test_a_misspelt_field_loses_none_of_the_rules_problems(stack, key, place, typo):
    document = json.loads(FLAWED[stack][key])
    parent = _at(document, place[:-1])
    parent[typo] = parent.pop(place[-1])
    config = {**FLAWED[stack], key: json.dumps(document)}
    heading, lines = outcome(config, stack)
    (unknown,) = shape_lines(config)
    assert f'has unknown field(s) "{typo}"; did you mean {place[-1]}?' in unknown
    assert lines == {unknown} | FLAWED_LINES[stack]
    assert HELD_BACK not in heading


class _Watched:
    """A GPU group (or its validated entry) that records every attribute a rule reads of it."""

    def __init__(self, real: Any, reads: set[str], prefix: str = "") -> None:
        self._real, self._reads, self._prefix = real, reads, prefix

    def __getattr__(self, name: str) -> Any:
        self._reads.add(self._prefix + name)
        value = getattr(self._real, name)
        return _Watched(value, self._reads, "settings.") if name == "settings" else value


# Each own field, as the group's entry and the group's parsed attributes hold it.
OWN_FIELD_READS = {
    "bootDiskSizeGib": {"settings.bootDiskSizeGib", "boot_disk_gib"},
    "strategy": {"settings.strategy", "strategy"},
    "autoRepair": {"settings.autoRepair", "auto_repair"},
    "capacity": {"settings.capacity", "capacity", "spot"},
}


def test_the_group_fields_that_hold_back_no_rule_across_the_stack_are_read_by_none(monkeypatch):
    """GROUP_OWN_FIELDS is a claim about the rules across the stack: run them and record what they read."""
    assert set(OWN_FIELD_READS) == set(GROUP_OWN_FIELDS)
    reads: set[str] = set()
    parse_groups, check_names = stack_module.parse_gpu_node_groups, stack_module.check_node_group_names
    monkeypatch.setattr(
        stack_module,
        "parse_gpu_node_groups",
        lambda *args: [_Watched(group, reads) for group in parse_groups(*args)],
    )
    monkeypatch.setattr(
        stack_module,
        "check_node_group_names",
        lambda name, groups, *rest: check_names(name, [group._real for group in groups], *rest),
    )
    # The price check reads the capacity, and is held back by a refused one (PRICE_UNREAD_GROUP_FIELDS).
    priced = stack_module.priced_nodes
    monkeypatch.setattr(stack_module, "priced_nodes", lambda groups: priced([group._real for group in groups]))
    queued = config_of("prod", queues={"teams": [{"name": "a", "quotas": [{"group": "h200-train", "gpus": 8}]}]})
    for config in (queued, FLAWED["prod"], config_of("dev", userClaimTemplates=[TWO_GPUS_AND_ONE_NIC])):
        with contextlib.suppress(ConfigError):
            parse_stack_config(config, "prod")
    assert {"name", "preset", "settings.labels"} & reads, reads  # the recording sees the rules' reads
    for field_name, held in OWN_FIELD_READS.items():
        assert not held & reads, (field_name, held & reads)


def _model_depth(annotation: Any) -> int:
    members = [annotation]
    depth = 0
    while members:
        depth += 1
        members = [
            info.annotation
            for member in members
            for model in _models_in(member)
            for info in model.model_fields.values()
        ]
    return depth


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in _models_in(arg)]


def test_the_salvage_has_a_round_for_every_level_the_input_models_nest():
    assert 5 <= _model_depth(StackInput) < MAX_ROUNDS


@pytest.mark.parametrize(
    ("documents", "expected"),
    [
        ({"builtinClaimTemplates": ["gpu", "multi-gpus"]}, '[1] got "multi-gpus"; did you mean multi-gpu?'),
        (
            {
                "userClaimTemplates": [
                    {"name": "t", "requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.co"}}]}
                ]
            },
            'deviceClassName "gpu.nvidia.co" is not a DeviceClass this cluster provides; did you mean gpu.nvidia.com?',
        ),
    ],
)
def test_a_misspelt_name_of_something_the_stack_knows_gets_the_close_one(documents, expected):
    _, lines = outcome(config_of("dev", **documents))
    assert any(expected in line for line in lines), lines


def test_a_pcie_root_constraint_over_two_gpus_and_a_nic_plans_and_the_pack_says_what_it_rests_on():
    """On 8-GPU InfiniBand nodes the template fits; whether one PCIe root holds its three devices is the nodes' layout."""
    run = run_program(
        "prod",
        config={f"nebius-dra:{k}": v for k, v in config_of("prod", userClaimTemplates=[TWO_GPUS_AND_ONE_NIC]).items()},
    )
    assert run.error is None, run.error
    resources = [PlannedResource(r.urn, r.type, r.name, copy.deepcopy(r.inputs)) for r in run.resources]
    findings = [f for f in check_resources(resources) if f.policy == "pcie-root-constraint-per-pair"]
    assert [f.mandatory for f in findings] == [False]
    assert (
        "constraints[0] asks one PCIe root (resource.kubernetes.io/pcieRoot) for 2 GPU(s) and 1 NIC(s)"
        in findings[0].message
    )
