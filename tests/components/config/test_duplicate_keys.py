"""A key given twice in any YAML or JSON file or answer a tool reads is refused, naming the file and both lines.

Python's readers keep the last value without a word; the Pulumi CLI refuses a key given twice in
`Pulumi.yaml` and stack files (gopkg.in/yaml.v3; e2e/yaml_v3 runs it on the same documents). The
policy pack config is read as the CLI reads it, last value kept, with a warning.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from components.config.prices import PRICE_TABLE_FILE, PriceTableError, parse_price_table
from components.config.reading import InputError, load_json, load_yaml, parse_json, parse_yaml
from components.config.stack_file import PROJECT_DIR, StackFileError, declared_config, read_stack_file
from tests.existing_clusters import KEY, KUBECONFIG, existing
from tools.import_graph import ROOT, python_files
from tools.plan import __main__ as plan
from tools.verify.floors import FloorsError, load_floors
from tools.verify.kubeconfig import KubeconfigError, read_document

TWICE = r'the key "{key}" is given twice, at line {first} and at line {again}'


def _twice(key: str, first: int, again: int) -> str:
    return TWICE.format(key=key.replace("-", r"\-"), first=first, again=again)


def test_a_yaml_key_given_twice_is_refused_at_any_depth_naming_both_lines():
    with pytest.raises(InputError, match=_twice("a", 1, 3)):
        parse_yaml("a: 1\nb: 2\na: 3\n", "f.yaml")
    with pytest.raises(InputError, match=_twice("fixedNodeCount", 3, 5)):
        parse_yaml("groups:\n  - name: a\n    fixedNodeCount: 1\n    platform: p\n    fixedNodeCount: 2\n", "f.yaml")
    with pytest.raises(InputError, match=r'"a" is given twice, at line 1, column 2 and at line 1, column 8'):
        parse_yaml("{a: 1, a: 2}", "f.yaml")


def test_repeated_values_and_the_same_key_in_sibling_maps_are_no_duplicates():
    assert parse_yaml("x: &v {a: 1}\ny: *v\nz: [{a: 1}, {a: 2}]\n", "f.yaml") == {
        "x": {"a": 1},
        "y": {"a": 1},
        "z": [{"a": 1}, {"a": 2}],
    }
    assert parse_json('[{"a": 1}, {"a": 2, "b": {"a": 3}}]', "f.json") == [{"a": 1}, {"a": 2, "b": {"a": 3}}]


def test_a_json_key_given_twice_is_refused_naming_both_places_even_when_spelt_with_escapes():
    with pytest.raises(
        InputError, match=r'f.json: the key "c" is given twice, at line 2, column 8 and at line 2, column 16'
    ):
        parse_json('{"a": "}{\\"c\\":",\n "b": {"c": 1, "c": 2}}', "f.json")
    with pytest.raises(InputError, match=_twice("ab", 1, 2)):
        parse_json('{"a\\u0062": 1,\n"ab": 2}', "f.json")
    with pytest.raises(InputError, match=_twice("a", 1, 2)):
        parse_json(b'{"a": 1,\n"a": 2}', "f.json")


def test_a_json_reader_that_keeps_the_last_value_is_told_each_key_given_twice():
    told: list[str] = []
    assert parse_json('{"a": 1, "a": 2,\n"b": [{"c": 1,\n"c": 3}]}', "p.json", on_duplicate=told.append) == {
        "a": 2,
        "b": [{"c": 3}],
    }
    assert told == [
        'p.json: the key "a" is given twice, at line 1, column 2 and at line 1, column 10',
        'p.json: the key "c" is given twice, at line 2 and at line 3',
    ]


def _project(tmp_path: Path, stack_text: str, project: Path = PROJECT_DIR) -> Path:
    shutil.copyfile(project / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "Pulumi.try.yaml").write_text(stack_text)
    return tmp_path


def test_a_stack_file_with_a_top_level_key_or_a_group_field_twice_is_not_planned(tmp_path, capsys):
    dev = (PROJECT_DIR / "Pulumi.dev.yaml").read_text()
    field = dev.replace("      fixedNodeCount: 1\n", "      fixedNodeCount: 1\n      fixedNodeCount: 4\n", 1)
    line = dev[: dev.index("      fixedNodeCount: 1\n")].count("\n") + 1
    for text, message in (
        (dev + "config:\n  nebius-dra:clusterName: b\n", _twice("config", 3, len(dev.splitlines()) + 1)),
        (field, _twice("fixedNodeCount", line, line + 1)),
    ):
        path = _project(tmp_path, text) / "Pulumi.try.yaml"
        assert plan.main(["--stack-file", str(path), "--out", "none"]) == plan.EXIT_PROGRAM
        shown = capsys.readouterr()
        assert re.search(f"Pulumi.try.yaml: {message}", shown.out + shown.err), shown


def test_the_project_file_and_the_bootstraps_stack_files_refuse_a_key_given_twice(tmp_path):
    project = tmp_path / "Pulumi.yaml"
    project.write_text((PROJECT_DIR / "Pulumi.yaml").read_text() + "name: other\n")
    with pytest.raises(StackFileError, match=r'Pulumi.yaml: the key "name" is given twice, at line 1 and'):
        declared_config(project)
    bootstrap = ROOT / "tools" / "ci_identity"
    text = (bootstrap / "Pulumi.dev.yaml").read_text()
    twice = text + "  nebius-dra-ci-identity:projectId: project-e00prod000000000000\n"
    first = text[: text.index("nebius-dra-ci-identity:projectId")].count("\n") + 1
    (tmp_path / "ci").mkdir()
    folder = _project(tmp_path / "ci", twice, bootstrap)
    with pytest.raises(
        StackFileError, match=_twice("nebius-dra-ci-identity:projectId", first, len(twice.splitlines()))
    ):
        read_stack_file("try", folder)


@pytest.mark.parametrize("long_first", [True, False])
@pytest.mark.parametrize(
    ("project", "namespace", "key", "value"),
    [
        (PROJECT_DIR, "nebius-dra", "subnetId", "vpcsubnet-e00dev000000000001"),
        (ROOT / "tools" / "ci_identity", "nebius-dra-ci-identity", "repository", "evil-org/evil"),
    ],
)
def test_a_key_given_also_in_the_legacy_config_form_is_refused_naming_both_lines(
    tmp_path, project, namespace, key, value, long_first
):
    """The CLI reads `<namespace>:config:<key>` as `<namespace>:<key>` (config.ParseKey) and keeps one of the two."""
    text = (project / "Pulumi.dev.yaml").read_text()
    long_line = next(n for n, line in enumerate(text.splitlines(), 1) if line.startswith(f"  {namespace}:{key}:"))
    legacy = f"{namespace}:config:{key}"
    short = f"  {legacy}: {value}\n"
    twice = text + short if long_first else text.replace("config:\n", "config:\n" + short, 1)
    spellings = [(f"{namespace}:{key}", long_line if long_first else long_line + 1), (legacy, len(twice.splitlines()))]
    if not long_first:
        short_line = twice.splitlines().index(short.rstrip("\n")) + 1
        spellings = [(legacy, short_line), (f"{namespace}:{key}", long_line + 1)]
    folder = _project(tmp_path, twice, project)
    expected = " and ".join(f'as "{spelt}" at line {line}' for spelt, line in spellings)
    with pytest.raises(StackFileError, match=re.escape(f"{namespace}:{key}: is given twice, {expected}")) as refused:
        read_stack_file("try", folder)
    assert refused.value.readable is not None
    assert value not in refused.value.readable.values.values()  # neither spelling's value is read


def test_baselines_price_tables_floors_and_kubeconfigs_refuse_a_key_given_twice(tmp_path, capsys):
    baseline = tmp_path / "main-plan.json"
    baseline.write_text('{"stack": "dev",\n "nodeGroups": [],\n "stack": "prod"}')
    assert plan.main(["--stack", "dev", "--format", "json", "--out", "none", "--baseline", str(baseline)]) == 2
    assert re.search(f'--baseline "{baseline}": ' + _twice("stack", 1, 3), capsys.readouterr().err)

    prices = PRICE_TABLE_FILE.read_text()
    with pytest.raises(PriceTableError, match=_twice("currency", *_lines_of(prices, "currency"))):
        parse_price_table(prices + _again(prices, "currency"))

    floors = tmp_path / "floors.yaml"
    floors.write_text("floors:\n  - platform: gpu-h200-sxm\n    platform: gpu-b200-sxm\n")
    with pytest.raises(FloorsError, match=_twice("platform", 2, 3)):
        load_floors(floors)

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG + "current-context: y\n")
    with pytest.raises(
        KubeconfigError,
        match=_twice("current-context", *_lines_of(KUBECONFIG + "current-context: y\n", "current-context")),
    ):
        read_document(kubeconfig)


def _lines_of(text: str, key: str) -> tuple[int, int]:
    lines = [number for number, line in enumerate(text.splitlines(), 1) if line.startswith(f"{key}:")]
    return lines[0], lines[-1] if len(lines) > 1 else len(text.splitlines()) + 1


def _again(text: str, key: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"{key}:")) + "\n"


def test_the_policy_config_keeps_the_last_value_as_the_cli_does_and_says_so(tmp_path, capsys):
    config = tmp_path / "policy.json"
    config.write_text('{"max-hourly-cost": "advisory",\n "max-hourly-cost": "disabled"}')
    assert plan.main(["--stack", "dev", "--format", "json", "--out", "none", "--policy-config", str(config)]) == 0
    captured = capsys.readouterr()
    assert (
        f'warning: --policy-config "{config}": the key "max-hourly-cost" is given twice, at line 1 and at line 2; '
        in captured.err
    )
    assert "keeps the last value, as `pulumi preview --policy-pack-config` does" in captured.err
    assert not [f for f in json.loads(captured.out)["findings"] if f["policy"] == "max-hourly-cost"]


def test_a_secret_kubeconfig_with_a_key_twice_is_refused_by_lines_without_quoting_it():
    run = existing("dev", kubeconfig=KUBECONFIG.replace("users:", "users: []\nusers:"))
    message = str(run.error)
    assert f"{KEY}: gives a key twice, at line " in message
    assert "t0ken" not in message and '"users"' not in message


def test_a_structured_value_the_cli_passes_as_json_with_a_key_twice_names_its_key():
    run = existing("dev", **{"nebius-dra:draDriverValues": '{"a": 1, "a": 2}'})
    assert "nebius-dra:draDriverValues: got" in str(run.error)
    assert 'the key "a" is given twice' in str(run.error)


# Readers that are not the loader; each says why it is not a file or answer from outside.
NOT_FROM_OUTSIDE = {
    # The secret strings to hide: every string of every value of the text, a key given twice too (decode_config
    # reads the text, and refuses the key, itself).
    ("components/redaction.py", "json.loads"),
    # The repository's own table, read at import by the lowest layer, which cannot import the loader (nor the
    # config package it is in); the last test below reads the table through the loader.
    ("components/dra_minors.py", "json.loads"),
    # The same for the GPU platform table (policies/dra_guardrails/driver_presets.json, which the last test below
    # reads through the loader).
    ("components/gpu_platforms.py", "json.loads"),
    # And for the table of the presets Nebius offers per platform (components/resource_presets.json).
    ("components/resource_presets.py", "json.loads"),
    # `.ci/run` starts under the system Python before the virtualenv (and PyYAML) exists; it reads the repository's
    # own figures file and the timings it wrote itself, and the last test below reads the figures file through the loader.
    ("tools/ci_run.py", "json.loads"),
}
READER_CALLS = {
    "load",
    "loads",
    "safe_load",
    "safe_load_all",
    "load_all",
    "full_load",
    "full_load_all",
    "unsafe_load",
    "unsafe_load_all",
    "compose",
    "compose_all",
    "JSONDecoder",
    "raw_decode",
}


def _every_reader(path: Path) -> set[tuple[str, str]]:
    return {(str(path.relative_to(ROOT)), f"{module}.{call}") for module in ("json", "yaml") for call in READER_CALLS}


def _reader_calls(path: Path) -> set[tuple[str, str]]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        named = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        if named and node.value.id in ("json", "yaml") and node.attr in READER_CALLS:  # type: ignore[attr-defined]
            found.add((str(path.relative_to(ROOT)), f"{node.value.id}.{node.attr}"))
        if isinstance(node, ast.ImportFrom) and node.module in ("json", "yaml"):
            found |= {
                (str(path.relative_to(ROOT)), f"{node.module}.{alias.name}")
                for alias in node.names
                if alias.name in READER_CALLS
            }
    return found


def test_every_yaml_and_json_read_of_the_program_and_the_tools_goes_through_the_loader():
    """The policy pack cannot import the program (it runs from policies/ under the CLI); it reads its own
    tables and the program's resource properties, and the next test reads its tables through the loader."""
    files = [p for p in python_files() if p.relative_to(ROOT).parts[0] != "policies"] + [ROOT / "__main__.py"]
    found = set().union(*(_reader_calls(p) for p in files)) - {
        ("components/config/reading.py", "yaml.load"),
        ("components/config/reading.py", "yaml.compose"),  # key_lines, of a file yaml.load has read
        ("components/config/reading.py", "json.loads"),
    }
    assert found == NOT_FROM_OUTSIDE


def test_the_readers_are_found_where_they_are():
    assert ("components/config/reading.py", "json.loads") in _reader_calls(ROOT / "components/config/reading.py")


def test_every_yaml_and_json_file_of_the_repository_gives_each_key_once():
    """The files the tools and the pack read, and the ones the tests and workflows read, all through the loader."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "*.yaml", "*.yml", "*.json"], capture_output=True, text=True, check=True
    ).stdout.split()
    for name in listed:
        if "node_modules" not in name:
            (load_json if name.endswith(".json") else load_yaml)(ROOT / name, name)
    assert {
        "Pulumi.yaml",
        "prices/nebius.yaml",
        "policies/dra_guardrails/driver_presets.json",
        "components/resource_presets.json",
    } <= set(listed)


KEYS = st.text(alphabet='ab"\\{}[],:\n\u00e9', max_size=3)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | KEYS,
    lambda inner: st.lists(inner, max_size=3) | st.lists(st.tuples(KEYS, inner), max_size=4),
    max_leaves=12,
)


def _text(value: object, indent: bool) -> str:
    """JSON text of `value`, where a list of (key, value) pairs is an object that may give a key twice."""
    gap = "\n " if indent else ""
    if isinstance(value, list) and value and all(isinstance(item, tuple) for item in value):
        return "{" + ",".join(f"{gap}{json.dumps(k)}: {_text(v, indent)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ",".join(gap + _text(item, indent) for item in value) + "]"
    return json.dumps(value)


def _gives_a_key_twice(value: object) -> bool:
    if isinstance(value, list) and value and all(isinstance(item, tuple) for item in value):
        keys = [k for k, _ in value]
        return len(set(keys)) < len(keys) or any(_gives_a_key_twice(v) for _, v in value)
    return isinstance(value, list) and any(_gives_a_key_twice(item) for item in value)


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES, indent=st.booleans())
@example(value=[("a", [("}", 1)]), ("a", 2)], indent=True)
def test_a_json_key_given_twice_is_found_at_any_depth_whatever_the_keys_hold(value, indent):
    text = _text(value, indent)
    if _gives_a_key_twice(value):
        with pytest.raises(InputError, match="is given twice, at line"):
            parse_json(text, "f.json")
    else:
        parse_json(text, "f.json")


MERGED_GROUPS = """config:
  nebius-dra:gpuNodeGroups:
    - &g {name: h200, platform: gpu-h200-sxm, preset: 1gpu-16vcpu-200gb, fixedNodeCount: 1}
    - <<: *g
      name: h200b
"""


def test_a_yaml_merge_key_is_refused_once_naming_its_line():
    """Attack 2, A14: the Pulumi CLI's yaml.v3 merges `<<: *g`; the plan read a key named `<<` and said platform and
    preset were required. One line says what is not read, and where."""
    with pytest.raises(InputError) as refused:
        parse_yaml(MERGED_GROUPS, "Pulumi.mk.yaml")
    assert str(refused.value) == (
        "Pulumi.mk.yaml: line 4: YAML merge keys (<<) are not read by the offline plan and the project's tools; "
        "write the fields out"
    )


def test_a_quoted_double_less_than_is_an_ordinary_key():
    assert parse_yaml('"<<": 1\n', "x.yaml") == {"<<": 1}
