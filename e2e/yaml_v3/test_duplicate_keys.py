"""A key given twice is refused where the Pulumi CLI's own reader refuses it, at the same lines.

The CLI reads `Pulumi.yaml` and stack files with gopkg.in/yaml.v3 v3.0.1 and `--policy-pack-config`
with Go's encoding/json (main.go here says where); these tests run both readers, built from the module
proxy, on the documents the project's loader (`components.config.reading`) reads.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from components.config.reading import InputError, parse_json, parse_yaml
from tests.helpers import go_program

READERS = Path(__file__).resolve().parent
GO_DUPLICATE = re.compile(r'line (\d+): mapping key "(.*)" already defined at line (\d+)')

STACK_FILES = {
    "a top-level key twice": "config:\n  nebius-dra:clusterName: a\nconfig:\n  nebius-dra:clusterName: b\n",
    "a config key twice": "config:\n  nebius-dra:systemNodeCount: 1\n  nebius-dra:samplePods: true\n"
    "  nebius-dra:systemNodeCount: 3\n",
    "a group field twice": "config:\n  nebius-dra:gpuNodeGroups:\n    - name: h200\n      fixedNodeCount: 1\n"
    "      platform: gpu-h200-sxm\n      fixedNodeCount: 4\n",
    "a quoted and a plain key": 'config:\n  "nebius-dra:clusterName": a\n  nebius-dra:clusterName: b\n',
    "a flow mapping": "config: {nebius-dra:clusterName: a,\n  nebius-dra:clusterName: b}\n",
    "a merge key twice": "base: &b {x: 1}\nother: &o {y: 1}\nconfig:\n  <<: *b\n  <<: *o\n",
    "the same key in sibling maps": "config:\n  nebius-dra:gpuNodeGroups:\n    - name: a\n    - name: b\n",
    "an alias repeating a map": "groups: &g {name: a}\nconfig: {x: *g, y: *g}\n",
}


def _places(message: str) -> tuple[str, int, int] | None:
    found = re.search(r'the key "(.*)" is given twice, at line (\d+)(?:, column \d+)? and at line (\d+)', message)
    return (found[1], int(found[2]), int(found[3])) if found else None


@pytest.fixture(scope="module")
def yaml_v3() -> dict[str, str]:
    readings = go_program(READERS, [{"format": "yaml", "text": text} for text in STACK_FILES.values()])
    return {case: reading["error"] for case, reading in zip(STACK_FILES, readings, strict=True)}


@pytest.mark.parametrize("case", STACK_FILES)
def test_a_key_given_twice_is_refused_where_yaml_v3_refuses_it_naming_the_same_lines(case, yaml_v3):
    try:
        parse_yaml(STACK_FILES[case], "Pulumi.try.yaml")
        ours = None
    except InputError as refused:
        ours = _places(str(refused))
        assert ours, refused
    go = GO_DUPLICATE.search(yaml_v3[case])
    assert (go[2], int(go[3]), int(go[1])) == ours if go else ours is None, yaml_v3[case]


def test_keys_that_read_as_one_value_are_refused_though_yaml_v3_keeps_both_texts():
    """yaml.v3 compares keys' texts (decode.go `mapping`), so `1` and `01` are two keys to it; read into a
    Python map they are one, and one value would be dropped silently, so the loader refuses them."""
    text = "1: a\n01: b\n"
    [go] = go_program(READERS, [{"format": "yaml", "text": text}])
    assert go == {"error": "", "value": {"1": "a", "01": "b"}}
    with pytest.raises(InputError, match=r'the key "1" is given twice, at line 1 and at line 2'):
        parse_yaml(text, "values.yaml")


def test_the_policy_config_keeps_the_last_value_of_a_key_given_twice_as_encoding_json_does():
    text = '{\n  "max-hourly-cost": {"maxHourlyUsd": 10},\n  "max-hourly-cost": {"maxHourlyUsd": 99}\n}'
    [go] = go_program(READERS, [{"format": "json", "text": text}])
    told: list[str] = []
    assert parse_json(text, "--policy-config p.json", on_duplicate=told.append) == go["value"]
    assert go["value"] == {"max-hourly-cost": {"maxHourlyUsd": 99}}
    assert told == ['--policy-config p.json: the key "max-hourly-cost" is given twice, at line 2 and at line 3']
