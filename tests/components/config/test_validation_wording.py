"""Every problem a stack's values can have is told in the project's words, never pydantic's.

For each key of the stack, generated values are put at every place its schema type has (model fields by name,
the first entry of a list, a value of a map), on top of the dev stack's real config, and parsed the way the
program parses them. A refusal may name any key, but no line may carry pydantic's defaults ("Input should be a
valid dictionary or instance of CapacityInput", "Field required", "Value error, ..."), which name Python types
and model classes the user never wrote. Those phrases are read from the installed pydantic-core's own message
templates, and a phrase the generated value itself holds is not looked for: a refusal quotes the value back
(`got "pydantic"; expected true or false`), and the quote is the user's text, not pydantic's.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic_core._pydantic_core import list_all_errors  # the compiled core, where its message table is kept

from components.config.errors import ConfigError
from components.config.raw import FIELD_KINDS
from components.config.stack import parse_stack_config
from components.config.stack_file import load_stack_config, program_config
from components.input.stack import StackInput
from tests.generated_input import VALUES, places, put


def template_phrase(template: str) -> str:
    """The longest fixed text of a pydantic message template ("Input should be {expected}" -> "Input should be")."""
    return max((part.strip() for part in re.split(r"\{[^}]*\}", template)), key=len)


# pydantic-core's message templates (pydantic-core 2.50.5, list_all_errors: "Field required", "Value error, {error}",
# "Input should be a valid dictionary or instance of {class_name}", ...), and the package's own name (its
# documentation links, module paths).
PYDANTIC_PHRASES = sorted(
    {template_phrase(error["message_template_python"]) for error in list_all_errors()} | {"pydantic"}
)
# errors.allowed_rule's last resort: a pydantic error type it has no wording for.
UNWORDED = "expected another value"
BOUNDED = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
BASE = program_config(load_stack_config("dev"))


def config_with(key: str, place: tuple[Any, ...], value: Any) -> dict[str, str]:
    """The dev stack's config strings with `value` at `place` inside `key`, encoded as the CLI encodes the key."""
    if FIELD_KINDS[key] != "json":
        return {**BASE, key: value if isinstance(value, str) else json.dumps(value)}
    document = json.loads(BASE[key]) if key in BASE else {}
    return {**BASE, key: json.dumps(put(copy.deepcopy(document), place, value))}


def problem_lines(config: dict[str, str]) -> list[str]:
    try:
        parse_stack_config(config, "dev")
    except ConfigError as error:
        return str(error).splitlines()[1:]
    return []


def texts_in(value: Any) -> list[str]:
    """Every string in `value`: itself, or the keys and values of its maps and the entries of its lists."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for key, inner in value.items() for text in (*texts_in(key), *texts_in(inner))]
    if isinstance(value, list):
        return [text for inner in value for text in texts_in(inner)]
    return []


def echoes(given: Any) -> str:
    """The forms a refusal may quote `given` or a part of it in: JSON (as shown() quotes), repr, the bare text."""
    return "\n".join([json.dumps(given, sort_keys=True, default=repr), repr(given), *texts_in(given)])


def assert_in_project_words(lines: list[str], given: Any = None) -> None:
    """No line carries pydantic's wording, or the last-resort one; a phrase `given` itself holds is its echo."""
    quoted = echoes(given)
    phrases = [phrase for phrase in (*PYDANTIC_PHRASES, UNWORDED) if phrase not in quoted]
    for line in lines:
        assert line.startswith("  - nebius-dra:"), line
        assert not [phrase for phrase in phrases if phrase in line], line


def test_pydantics_phrases_are_read_from_its_templates():
    assert {"Field required", "Input should be", "Value error,", "Extra inputs are not permitted"} <= set(
        PYDANTIC_PHRASES
    )


def test_a_value_quoted_back_is_not_taken_for_pydantics_text():
    """The oracle's own case (issue 38): `"pydantic"` given, and the refusal quotes it back."""
    assert_in_project_words(
        ['  - nebius-dra:prometheusServiceMonitor: got "pydantic"; expected true or false'], "pydantic"
    )
    with pytest.raises(AssertionError):
        assert_in_project_words(
            ['  - nebius-dra:prometheusServiceMonitor: got "x"; Input should be a valid boolean'], "x"
        )


@pytest.mark.parametrize("key", list(StackInput.model_fields))
@BOUNDED
@given(place_index=st.integers(min_value=0), value=VALUES)
# Drawn by a random run of `make test` before it was derandomized: the refusal quoted the value back (issue 38).
@example(place_index=0, value="pydantic")
@example(place_index=0, value={"Field required": ["Input should be a valid integer"]})
def test_every_bad_value_of_every_key_is_told_in_the_projects_words(key, place_index, value):
    candidates = [(), *places(StackInput.model_fields[key].annotation)]
    place = candidates[place_index % len(candidates)]
    assert_in_project_words(problem_lines(config_with(key, place, value)), value)


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        (
            "gpuNodeGroups",
            [{"name": "a", "platform": "gpu-h200-sxm", "preset": "1gpu-16vcpu-200gb", "capacity": 1}],
            "nebius-dra:gpuNodeGroups entry a: capacity got 1; expected a map "
            "{type, reservationPolicy, capacityBlockGroupIds, maxPricePerGpuHour}",
        ),
        ("userClaimTemplates", [7], "nebius-dra:userClaimTemplates entry [0]: got 7; expected a map {name, requests,"),
        ("builtinClaimTemplates", {}, "nebius-dra:builtinClaimTemplates: got {}; expected a list"),
        (
            "gpuNodeGroups",
            [{"name": "a", "platform": "gpu-h200-sxm", "preset": "1gpu-16vcpu-200gb", "autoRepair": [{}] * 17}],
            "autoRepair got [{}",
        ),
        (
            "gpuNodeGroups",
            [{"name": "a", "platform": "gpu-h200-sxm", "preset": "1gpu-16vcpu-200gb", "autoRepair": [{}] * 17}],
            "it has 17, at most 16 allowed",
        ),
        ("userClaimTemplates", [{"name": "t"}], "nebius-dra:userClaimTemplates entry t: requests is required"),
    ],
)
def test_a_shape_problem_names_the_key_and_what_is_expected(key, value, expected):
    lines = problem_lines({**BASE, key: json.dumps(value)})
    assert any(expected in line for line in lines), lines
    assert_in_project_words(lines)
