"""Every regex the Pulumi CLI or an editor reads compiles, and means the same, in the engines that read it.

The policy pack's config schema reaches the Pulumi CLI, which compiles its patterns with Go's
regexp (gojsonschema); the published stack-file schema reaches editors and validators, which run
ECMA-262 regexes with the "u" flag. Python's re accepts syntax neither has (`\\Z`, lookbehind) and
its `$` also matches before a trailing newline, so it cannot stand in for them: these tests run
the engines. Each pattern is probed with a value it must take and that value spoiled; Go, ECMA-262
and pydantic's engine (how the program reads the same patterns) must give the same verdicts.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from pydantic import Field, TypeAdapter, ValidationError

from components.dra_constants import AUTO_REPAIR_CONDITIONS, DEFAULT_DRIVER_NAMESPACE
from components.input import fields as schema
from components.input.queues import FEATURE_GATE_PATTERN
from components.queue_model import DRA_GATE
from policies.dra_guardrails import RULES
from policies.dra_guardrails.cluster_rules import DEFAULT_MINIMUM_VERSION, MINIMUM_VERSION
from policies.dra_guardrails.node_group_rules import CHECKED_PRESET_EXAMPLE, CHECKED_PRESET_FIELDS
from tests.helpers import ecma_regexp, go_regexp
from tools.stack_schema import PROJECT_KEY_PATTERN, SCHEMA_FILE


def patterns_in(node: Any) -> Iterator[str]:
    """Every regex of a JSON Schema: `pattern` values and `patternProperties` keys, at any depth."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                yield value
            if key == "patternProperties":
                yield from value
            yield from patterns_in(value)
    elif isinstance(node, list):
        for item in node:
            yield from patterns_in(item)


# As the pack serves them: each rule's config schema properties.
POLICY_PATTERNS = sorted(
    {p for rule in RULES if rule.config_schema for p in patterns_in(rule.config_schema.properties)}
)
STACK_SCHEMA_PATTERNS = sorted(set(patterns_in(json.loads(SCHEMA_FILE.read_text()))))
PATTERNS = sorted({*POLICY_PATTERNS, *STACK_SCHEMA_PATTERNS})

# A value each pattern takes; a new pattern needs one here.
WHOLE_VALUE_EXAMPLES = {
    schema.DNS_LABEL_PATTERN: DEFAULT_DRIVER_NAMESPACE,
    schema.DNS_SUBDOMAIN_PATTERN: "gpu.nvidia.com",
    schema.RESOURCE_NAME_PATTERN: "dra-dev",
    schema.NEBIUS_ID_PATTERN: "project-e00dev0000000000000",
    schema.GROUP_NAME_PATTERN: "h200",
    schema.GPU_PRESET_PATTERN: "8gpu-128vcpu-1600gb",
    schema.CPU_PRESET_PATTERN: "4vcpu-16gb",
    schema.PLATFORM_PATTERN: "gpu-h200-sxm",
    schema.DRIVERS_PRESET_PATTERN: "cuda13.0",
    schema.CHART_VERSION_PATTERN: "v25.10.1",
    schema.IMAGE_PATTERN: "nvidia/cuda:13.1.1-runtime-ubuntu24.04",
    schema.ABSOLUTE_PATH_PATTERN: "/run/nvidia/driver",
    schema.FILE_PATH_PATTERN: "/etc/ssl/certs/mirror-ca.pem",
    schema.PROFILE_PATTERN: "ci",
    schema.FABRIC_PATTERN: "fabric-3",
    schema.QUALIFIED_ATTRIBUTE_PATTERN: "resource.kubernetes.io/pcieRoot",
    schema.REQUEST_REFERENCE_PATTERN: "gpu/h200",
    schema.PRODUCT_PATTERN: "NVIDIA H200",
    schema.LABEL_KEY_PATTERN: "nvidia.com/gpu.present",
    schema.LABEL_VALUE_PATTERN: "true",
    schema.DURATION_PATTERN: "1h30m",
    schema.PERCENT_PATTERN: "25%",
    schema.CONDITION_TYPE_PATTERN: AUTO_REPAIR_CONDITIONS[0],
    schema.PRICE_PATTERN: "3.515",
    schema.CHART_REPOSITORY_PATTERN: "https://helm.ngc.nvidia.com/nvidia",
    schema.REPOSITORY_USERNAME_PATTERN: "robot$dra+ci",
    schema.REPOSITORY_PASSWORD_PATTERN: "s3cret:pa@ss",
    schema.DATE_PATTERN: "2026-11-30",
    schema.SOURCE_PATTERN: "https://nebius.com/prices",
    schema.PRICE_SOURCE_PATTERN: "https://nebius.com/prices#gpu-h200",
    schema.QUANTITY_PATTERN: "40Gi",
    schema.CAPACITY_NAME_PATTERN: "gpu.nvidia.com/memory",
    schema.KUBERNETES_VERSION_PATTERN: "1.34-nebius-node.2",
    **{pattern.pattern: CHECKED_PRESET_EXAMPLE[field] for field, pattern in CHECKED_PRESET_FIELDS.items()},
    MINIMUM_VERSION.pattern: DEFAULT_MINIMUM_VERSION,
    FEATURE_GATE_PATTERN: DRA_GATE,
}
EXAMPLES = {
    **WHOLE_VALUE_EXAMPLES,
    **{schema.optional(pattern): example for pattern, example in WHOLE_VALUE_EXAMPLES.items()},
    # Not whole values: a bound beside LABEL_KEY_PATTERN, and the project's namespace of a key.
    schema.LABEL_PREFIX_BOUND_PATTERN: "nvidia.com/gpu.present",
    # A namespace the schema refuses when it matches (`not`): the prefix Kubernetes reserves.
    schema.RESERVED_NAMESPACE_PATTERN: "kube-flannel",
    PROJECT_KEY_PATTERN: "nebius-dra:parentId",
}


def spoiled(example: str) -> list[str]:
    """The example, then the example with a newline after or before it, a non-ASCII digit after it, and nothing."""
    return [example, f"{example}\n", f"\n{example}", f"{example}\u0661", ""]


PROBES = [{"pattern": pattern, "inputs": spoiled(EXAMPLES.get(pattern, ""))} for pattern in PATTERNS]


def pydantic_matches(pattern: str, inputs: list[str]) -> list[bool]:
    """What the program's models say: pydantic's engine with the models' configuration."""
    adapter = TypeAdapter(Annotated[str, Field(pattern=pattern)], config=schema.Shape.model_config)

    def takes(value: str) -> bool:
        try:
            adapter.validate_python(value)
        except ValidationError:
            return False
        return True

    return [takes(value) for value in inputs]


@pytest.fixture(scope="module")
def go() -> dict[str, dict]:
    return {verdict["pattern"]: verdict for verdict in go_regexp(PROBES)}


@pytest.fixture(scope="module")
def ecma() -> dict[str, dict]:
    return {verdict["pattern"]: verdict for verdict in ecma_regexp(PROBES)}


def test_the_patterns_are_found_and_each_has_an_example():
    assert len(POLICY_PATTERNS) == len(CHECKED_PRESET_FIELDS) + 1, "minimumVersion and checkedPresets' fields"
    assert schema.LABEL_KEY_PATTERN in STACK_SCHEMA_PATTERNS and PROJECT_KEY_PATTERN in STACK_SCHEMA_PATTERNS
    assert [pattern for pattern in PATTERNS if pattern not in EXAMPLES] == []


def test_go_compiles_every_pattern(go):
    assert [f"{pattern}: {go[pattern]['error']}" for pattern in PATTERNS if go[pattern]["error"]] == []


def test_ecma_262_compiles_every_pattern(ecma):
    assert [f"{pattern}: {ecma[pattern]['error']}" for pattern in PATTERNS if ecma[pattern]["error"]] == []


@pytest.mark.parametrize("probe", PROBES, ids=[probe["pattern"] for probe in PROBES])
def test_go_ecma_262_and_pydantic_give_the_same_verdicts(go, ecma, probe):
    pattern, inputs = probe["pattern"], probe["inputs"]
    python = pydantic_matches(pattern, inputs)
    assert python[0], f"the example {inputs[0]!r} does not match"
    assert go[pattern]["matches"] == ecma[pattern]["matches"] == python, list(zip(inputs, python, strict=True))


@pytest.mark.parametrize("pattern", WHOLE_VALUE_EXAMPLES)
def test_a_whole_value_pattern_refuses_a_trailing_newline(pattern):
    example = WHOLE_VALUE_EXAMPLES[pattern]
    assert pydantic_matches(pattern, [f"{example}\n", f"{example}\u0661"]) == [False, False]


# Values an image reference's grammar (github.com/distribution/reference) refuses, which the old character-class
# pattern took, and texts of about 1 MiB shaped so that a backtracking engine would take more than linear time over
# them if a part of the pattern could split them in more than one way (a domain label as `x[x-]*x`).
_MIB = 1 << 20
REFUSED_IMAGES = [
    "Nvidia/cuda:13.1.1",
    "nvidia/CUDA:13.1.1",
    "a//b:1",
    "a..b:1",
    "registry.example.com:99999/x:1",
    "robot:hunter2@registry.example.com/x:1",
    "nvidia/cuda",
    "nvidia/cuda@sha256:abc",
    "a" * _MIB,
    "a-" * (_MIB // 2) + "!",
    "a." * (_MIB // 2) + "A",
    "a/" * (_MIB // 2) + ":",
    "a.b/" + "a__" * (_MIB // 3),
    "a" * _MIB + ":" + "1" * 200,
    "r.io/" + "a-" * (_MIB // 2) + "@sha256:" + "0" * 64 + "!",
    "[" + "0:" * (_MIB // 2),
    "x:1@" + "a." * (_MIB // 2),
]
TAKEN_IMAGES = ["nvcr.io/nvidia/pytorch:25.01-py3", "localhost:5000/a__b--c.d:v1", "x@sha256:" + "0" * 64]


def test_the_image_pattern_follows_the_reference_grammar_in_linear_time_in_every_engine():
    inputs = [*TAKEN_IMAGES, *REFUSED_IMAGES]
    probes = [{"pattern": schema.IMAGE_PATTERN, "inputs": inputs}]
    expected = [True] * len(TAKEN_IMAGES) + [False] * len(REFUSED_IMAGES)
    started = time.monotonic()
    (ecma,) = ecma_regexp(probes)
    ecma_seconds = time.monotonic() - started
    (go,) = go_regexp(probes)
    assert ecma["error"] == go["error"] == ""
    assert ecma["matches"] == go["matches"] == pydantic_matches(schema.IMAGE_PATTERN, inputs) == expected
    # About 10 MiB of text: linear matching takes well under a second; quadratic would take hours.
    assert ecma_seconds < 10
